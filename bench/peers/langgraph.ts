/**
 * The LangGraph side, used the way its documentation shows: a `StateGraph` over
 * `MessagesAnnotation` (plus a `memory` channel with a merging reducer) compiled with a
 * checkpointer (`SqliteSaver.fromConnString`, or `PostgresSaver.fromConnString` + `setup()`),
 * one `graph.invoke` per turn on a `thread_id`, `graph.getState` for the latest state,
 * `getState` with a past `checkpoint_id` for time travel, and `updateState` on that past
 * checkpoint to fork. The graph's one node plays the scripted model and tools: it returns the
 * turn's assistant and tool messages (and memory write) for the user goal the turn was invoked with.
 */
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Annotation, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { ReferenceSaver } from './reference-saver.js';
import { type Backend, NO_STORAGE, ON_WEFT_SAVER, type Side, type Snapshot } from './side.js';
import type { ConversationView, Turn, ViewMessage } from './workload.js';

export const PeerState = Annotation.Root({
  ...MessagesAnnotation.spec,
  memory: Annotation<Record<string, string>>({
    reducer: (current, update) => ({ ...current, ...update }),
    default: () => ({}),
  }),
});

type PeerValues = typeof PeerState.State;
type Checkpointer = SqliteSaver | PostgresSaver | WeftSaver | ReferenceSaver;

const THREAD_ID = 'bench-thread';

/** The turn's messages after its goal, as a model + tools would have produced them. */
export function turnMessages(turn: Turn): BaseMessage[] {
  const out: BaseMessage[] = [];
  let m = 0;
  for (const step of turn.steps) {
    const id = `t${turn.n}-m${++m}`;
    if (step.type === 'inference') {
      out.push(
        new AIMessage({
          id,
          content: step.inference.text,
          tool_calls: step.inference.toolCalls.map((call) => ({
            id: call.id,
            name: call.name,
            args: call.args,
            type: 'tool_call' as const,
          })),
        }),
      );
    } else {
      out.push(
        new ToolMessage({
          id,
          content: step.result.content,
          tool_call_id: step.result.toolCallId,
        }),
      );
    }
  }
  out.push(new AIMessage({ id: `t${turn.n}-answer`, content: turn.answer }));
  return out;
}

/** Compiles the one-node agent graph over a script of turns keyed by their goal message id. */
export function compileAgent(checkpointer: Checkpointer, script: Map<string, Turn>) {
  const agent = (state: PeerValues): Partial<PeerValues> => {
    const goal = state.messages.at(-1);
    const turn = goal?.id === undefined ? undefined : script.get(goal.id);
    // A compacted history (see writeCompacted) arrives whole as the input: nothing to add.
    if (turn === undefined) return {};
    const update: Partial<PeerValues> = { messages: turnMessages(turn) };
    if (turn.memory !== undefined) update.memory = { [turn.memory.key]: turn.memory.content };
    return update;
  };
  return new StateGraph(PeerState)
    .addNode('agent', agent)
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer });
}

type Agent = ReturnType<typeof compileAgent>;

const text = (content: BaseMessage['content']): string =>
  typeof content === 'string' ? content : JSON.stringify(content);

/** LangGraph's read-back (`StateSnapshot.values`) as the comparable view. */
export function langGraphView(values: PeerValues): ConversationView {
  const messages: ViewMessage[] = values.messages.map((message): ViewMessage => {
    if (HumanMessage.isInstance(message)) return { role: 'user', content: text(message.content) };
    if (ToolMessage.isInstance(message)) {
      return { role: 'tool', toolCallId: message.tool_call_id, content: text(message.content) };
    }
    if (AIMessage.isInstance(message)) {
      return {
        role: 'assistant',
        content: text(message.content),
        toolCalls: (message.tool_calls ?? []).map((call) => ({
          id: call.id ?? '',
          name: call.name,
          args: call.args as Record<string, string>,
        })),
      };
    }
    throw new Error(`unexpected message type ${message.getType()}`);
  });
  return { messages, memory: { ...values.memory } };
}

export interface LangGraphTarget {
  backend: Backend;
  /** SQLite: a file path; Postgres: a connection string of an empty database. */
  location: string;
  /**
   * `invoke`'s durability: LangGraph's default ("async") saves a checkpoint after every step
   * (three per turn here); "exit" saves only the last one of each invoke.
   */
  durability?: 'async' | 'sync' | 'exit' | undefined;
  /** Checkpoint with WeftSaver (on a Weft engine over `location`) instead of LangGraph's saver. */
  weftSaver?: boolean;
  /** The LangGraph thread written (default one fixed id). */
  threadId?: string;
  /** Checkpoint with ReferenceSaver (nothing stored): LangGraph's own work, the floor. */
  referenceSaver?: boolean;
}

export async function openLangGraph(target: LangGraphTarget): Promise<Side> {
  const script = new Map<string, Turn>();
  const open = async (): Promise<{ saver: Checkpointer; graph: Agent }> => {
    let saver: Checkpointer;
    if (target.referenceSaver === true) {
      saver = new ReferenceSaver();
    } else if (target.weftSaver === true) {
      const url = target.backend === 'sqlite' ? `file:${target.location}` : target.location;
      saver = new WeftSaver({ engine: await openEngine(url) });
    } else if (target.backend === 'sqlite') {
      saver = SqliteSaver.fromConnString(target.location);
    } else {
      saver = PostgresSaver.fromConnString(target.location);
      await saver.setup();
    }
    return { saver, graph: compileAgent(saver, script) };
  };
  const closeSaver = async (saver: Checkpointer) => {
    if (saver instanceof ReferenceSaver) return;
    if (saver instanceof WeftSaver) await saver.engine.close();
    else if (saver instanceof SqliteSaver) saver.db.close();
    else await saver.end();
  };
  const { saver, graph } = await open();
  const inSaver = timeMethods(saver, ['getTuple', 'list', 'put', 'putWrites']);
  const config: RunnableConfig = { configurable: { thread_id: target.threadId ?? THREAD_ID } };
  // After opening: the Weft engine's migrations are schema, not checkpoints.
  const baseline = target.backend === 'postgres' ? await postgresBytes(target.location) : 0;

  const side: Side = {
    system:
      target.referenceSaver === true
        ? NO_STORAGE
        : target.weftSaver === true
          ? ON_WEFT_SAVER
          : 'LangGraph',
    backend: target.backend,
    async writeTurn(turn) {
      const goalId = `t${turn.n}-goal`;
      script.set(goalId, turn);
      await graph.invoke(
        { messages: [new HumanMessage({ id: goalId, content: turn.goal })] },
        target.durability === undefined ? config : { ...config, durability: target.durability },
      );
      script.delete(goalId);
    },
    async writeCompacted(turns) {
      const messages: BaseMessage[] = [];
      const memory: Record<string, string> = {};
      for (const turn of turns) {
        messages.push(new HumanMessage({ id: `t${turn.n}-goal`, content: turn.goal }));
        messages.push(...turnMessages(turn));
        if (turn.memory !== undefined) memory[turn.memory.key] = turn.memory.content;
      }
      await graph.invoke({ messages, memory }, config);
    },
    async mark() {
      const snapshot = await graph.getState(config);
      return snapshot.config;
    },
    readLatest: () => graph.getState(config),
    async coldReader() {
      const fresh = await open();
      return {
        read: () => fresh.graph.getState(config),
        close: () => closeSaver(fresh.saver),
      };
    },
    readAt: (mark) => graph.getState(mark as RunnableConfig),
    async fork(mark) {
      // A fork is a new checkpoint branching from the past one (the documented way: updateState
      // on a prior checkpoint's config); invoking with that config continues the branch.
      const forked = await graph.updateState(mark as RunnableConfig, { messages: [] });
      return () => graph.getState(forked);
    },
    saverMs: inSaver,
    view: (snapshot: Snapshot) => langGraphView((snapshot as { values: PeerValues }).values),
    async bytes() {
      if (saver instanceof ReferenceSaver) return 0;
      if (saver instanceof SqliteSaver) return sqliteBytes(saver.db, target.location);
      if (target.backend === 'sqlite') return measureSqliteFile(target.location);
      return (await postgresBytes(target.location)) - baseline;
    },
    async close() {
      await closeSaver(saver);
    },
  };
  return side;
}

/**
 * Wraps `methods` of one checkpointer object to measure the wall time during which at least one
 * call of them is running (LangGraph overlaps a step's put and putWrites, so summing each call's
 * time would count the overlap twice); returns the total so far. A generator method (list)
 * counts while it produces each item.
 */
function timeMethods(target: object, methods: readonly string[]): () => number {
  let total = 0;
  let running = 0;
  let since = 0;
  const enter = () => {
    if (running++ === 0) since = performance.now();
  };
  const leave = () => {
    if (--running === 0) total += performance.now() - since;
  };
  const self = target as Record<string, (...args: unknown[]) => unknown>;
  for (const name of methods) {
    const original = self[name]!.bind(target);
    self[name] = (...args: unknown[]) => {
      enter();
      let result: unknown;
      try {
        result = original(...args);
      } catch (error) {
        leave();
        throw error;
      }
      if (result instanceof Promise) return result.finally(leave);
      leave();
      if (result !== null && typeof result === 'object' && Symbol.asyncIterator in result) {
        return (async function* () {
          const iterator = (result as AsyncIterable<unknown>)[Symbol.asyncIterator]();
          for (;;) {
            enter();
            let next: IteratorResult<unknown>;
            try {
              next = await iterator.next();
            } finally {
              leave();
            }
            if (next.done === true) return;
            yield next.value;
          }
        })();
      }
      return result;
    };
  }
  return () => (running === 0 ? total : total + performance.now() - since);
}

/** SQLite file bytes after a full WAL checkpoint (the -wal file included, ~0 by then). */
export function sqliteBytes(db: Database.Database, path: string): number {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const size = (file: string) => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return size(path) + size(`${path}-wal`);
}

/** `pg_database_size` of the database at `url`, through a connection of its own. */
export async function postgresBytes(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ size: string }>(
      'SELECT pg_database_size(current_database())::text AS size',
    );
    return Number(result.rows[0]!.size);
  } finally {
    await client.end();
  }
}

/** Opens a SQLite file just to checkpoint and measure it (for sides whose handle is private). */
export function measureSqliteFile(path: string): number {
  const db = new Database(path);
  try {
    return sqliteBytes(db, path);
  } finally {
    db.close();
  }
}
