/**
 * A real LangGraph StateGraph (a tool, a human review by `interrupt()`, a resume, time travel
 * with getStateHistory, a fork with updateState) checkpointed by WeftSaver into a Weft server's
 * database, on SQLite and Postgres. Checks that the graph's messages, Weft's causal nodes and
 * Weft's approvals tell the same story, and that a graphql-ws subscriber of that server saw
 * every node as it was appended.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Command } from '@langchain/langgraph';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WeftSaver } from '../../src/langgraph/index.js';
import {
  freshSqliteUrl,
  type LiveServer,
  type Payload,
  removeSqliteFiles,
  startServer,
  wsClient,
  wsSubscribe,
} from '../api/subscriptions-support.js';
import { freshPostgresUrl } from '../api/support.js';
import { describeWithPostgres } from '../support/services.js';
import { compileAgent } from './agent.js';

interface GqlNode {
  id: string;
  kind: string;
  sequence: number;
  parentIds: string[];
  payload: { messageId?: string; toolCallId?: string; role?: string; content?: unknown };
}

const NODE_FIELDS = 'id kind sequence parentIds payload';

function suite(backend: 'sqlite' | 'postgres') {
  let server: LiveServer;
  let ws: Client;
  let saver: WeftSaver;
  let graph: ReturnType<typeof compileAgent>;
  const config: RunnableConfig = { configurable: { thread_id: 'support-chat' } };
  let weftId: string;
  const seen: GqlNode[] = [];
  const approvalEvents: Array<{ runId: string; pendingApproval: unknown }> = [];
  const streams: AsyncIterableIterator<Payload>[] = [];

  const gql = async (query: string, variables: Record<string, unknown> = {}) => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as Payload;
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return body.data;
  };

  const collect = (stream: AsyncIterableIterator<Payload>, onData: (data: never) => void) => {
    streams.push(stream);
    void (async () => {
      for await (const payload of stream) if (payload.data) onData(payload.data as never);
    })();
  };

  const pendingApprovals = async () =>
    (
      await gql(
        `query($t: ID!) { approvals(filter: { state: PENDING, threadId: $t }) {
          edges { node { runId prompt state } } } }`,
        { t: weftId },
      )
    ).approvals.edges.map((e: { node: unknown }) => e.node);

  /** Approves the one pending approval through Weft's GraphQL API, as a reviewer would. */
  const approve = async (response: unknown) => {
    const [pending] = await pendingApprovals();
    const data = await gql(
      `mutation($r: ID!, $t: ID!, $resp: JSON) { resolveApproval(input: {
        runId: $r, threadId: $t, decision: "approved", response: $resp }) { __typename } }`,
      { r: pending.runId, t: weftId, resp: response },
    );
    expect(data.resolveApproval.__typename).toBe('ResolveApprovalSuccess');
    return pending;
  };

  beforeAll(async () => {
    const url = backend === 'sqlite' ? await freshSqliteUrl() : await freshPostgresUrl();
    server = await startServer(url);
    ws = wsClient(server.url);
    // The agent embeds Weft: its saver writes through the engine the server serves.
    saver = new WeftSaver({ engine: server.engine, pollIntervalMs: 20 });
    graph = compileAgent(saver);
    weftId = saver.weftThreadId(config);
    collect(
      wsSubscribe(ws, 'subscription { approvalRequested { runId threadId pendingApproval } }'),
      (data: { approvalRequested: { runId: string; pendingApproval: unknown } }) =>
        approvalEvents.push(data.approvalRequested),
    );
  });

  afterAll(async () => {
    await Promise.all(streams.map((s) => s.return?.()));
    await ws?.dispose();
    await server?.close();
    if (backend === 'sqlite') removeSqliteFiles();
  });

  it('runs, pauses at the review as a Weft approval, resumes with what the reviewer answered, travels back in time and forks; Weft saw every step', async () => {
    // 1. The first question: the model asks for a tool call and the review interrupts.
    const first = await graph.invoke(
      { messages: [new HumanMessage({ id: 'h1', content: 'find weft' })] },
      config,
    );
    expect((first as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const paused = await graph.getState(config);
    expect(paused.next).toEqual(['review']);

    // A subscriber of the server from the start of the thread's graph: replay, then live.
    collect(
      wsSubscribe(
        ws,
        `subscription($t: ID!) { nodeAppended(threadId: $t, afterSequence: 0) { ${NODE_FIELDS} } }`,
        { t: weftId },
      ),
      (data: { nodeAppended: GqlNode }) => seen.push(data.nodeAppended),
    );

    // 2. The interrupt is in Weft's approvals inbox, asking what the review asked.
    const inbox = await pendingApprovals();
    expect(inbox).toHaveLength(1);
    expect(inbox[0].prompt).toMatchObject({
      threadId: 'support-chat',
      checkpointId: paused.config.configurable?.checkpoint_id,
      interrupts: [{ value: { question: 'Run this tool call?', toolCall: { id: 'call-1' } } }],
    });

    // 3. The application waits; a reviewer resolves through the API; the graph resumes with it.
    const waiting = saver.waitForResume(config);
    const approved = await approve({ approved: true, note: 'go ahead' });
    const resume = await waiting;
    expect(resume).toMatchObject({
      runId: approved.runId,
      decision: 'approved',
      response: { approved: true, note: 'go ahead' },
    });
    const done = await graph.invoke(new Command({ resume: resume.response }), config);
    const mainBranch = done.messages as BaseMessage[];
    expect(mainBranch.map((m) => m.id)).toEqual(['h1', 'ai-1', 'result-call-1', 'ai-3']);
    expect(mainBranch[3]!.content).toBe('Answer: 3 results for "find weft"');
    expect(await pendingApprovals()).toEqual([]);

    // 4. Time travel: the checkpoint where only the question had arrived.
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const past = history.find(
      (s) =>
        (s.values.messages as BaseMessage[] | undefined)?.length === 1 && s.next[0] === 'agent',
    );
    expect(past, 'a checkpoint with only the question').toBeDefined();
    const travelled = await graph.getState(past!.config);
    expect((travelled.values.messages as BaseMessage[]).map((m) => m.id)).toEqual(['h1']);

    // 5. A fork from there: a different question, reviewed and resumed again.
    const forkConfig = await graph.updateState(past!.config, {
      messages: [new HumanMessage({ id: 'h2', content: 'find langgraph instead' })],
    });
    const forked = await graph.invoke(null, forkConfig);
    expect((forked as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const waitingAgain = saver.waitForResume(config);
    await approve({ approved: true });
    const again = await waitingAgain;
    const forkDone = await graph.invoke(new Command({ resume: again.response }), config);
    const forkBranch = forkDone.messages as BaseMessage[];
    expect(forkBranch.map((m) => m.id)).toEqual(['h1', 'h2', 'ai-2', 'result-call-2', 'ai-4']);
    expect(forkBranch[4]!.content).toBe('Answer: 3 results for "find langgraph instead"');
    // The main branch is still there, unchanged.
    const mainAgain = await graph.getState(history[0]!.config);
    expect((mainAgain.values.messages as BaseMessage[]).map((m) => m.id)).toEqual(
      mainBranch.map((m) => m.id),
    );

    // 6. Weft's causal graph holds every message once, as the right kind, parented on what it answers.
    const data = await gql(
      `query($t: ID!) { thread(id: $t) { nodeCount nodes(first: 100) { edges { node { ${NODE_FIELDS} } } } } }`,
      { t: weftId },
    );
    const nodes: GqlNode[] = data.thread.nodes.edges.map((e: { node: GqlNode }) => e.node);
    const byMessage = new Map<string, GqlNode>();
    const byCall = new Map<string, GqlNode>();
    for (const node of nodes) {
      if (node.kind === 'TOOL_CALL') byCall.set(node.payload.toolCallId!, node);
      else if (node.payload.messageId !== undefined) {
        expect(byMessage.has(node.payload.messageId), node.payload.messageId).toBe(false);
        byMessage.set(node.payload.messageId, node);
      }
    }
    const kindOf = (m: BaseMessage) =>
      HumanMessage.isInstance(m)
        ? 'GOAL'
        : ToolMessage.isInstance(m)
          ? 'TOOL_RESULT'
          : AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0
            ? 'INFERENCE'
            : 'ANSWER';
    const all = [...mainBranch, ...forkBranch.slice(1)];
    expect([...byMessage.keys()].sort()).toEqual(all.map((m) => m.id).sort());
    for (const message of all) {
      const node = byMessage.get(message.id!)!;
      expect(node.kind, message.id).toBe(kindOf(message));
      expect(node.payload.content).toEqual(message.content);
    }
    const nodeOf = (id: string) => byMessage.get(id)!.id;
    expect(byMessage.get('h1')!.parentIds).toEqual([]);
    expect(byMessage.get('ai-1')!.parentIds).toEqual([nodeOf('h1')]);
    expect(byCall.get('call-1')!.parentIds).toEqual([nodeOf('ai-1')]);
    expect(byMessage.get('result-call-1')!.parentIds).toEqual([byCall.get('call-1')!.id]);
    expect(byMessage.get('ai-3')!.parentIds).toEqual([nodeOf('result-call-1')]);
    // The fork branches off the first question.
    expect(byMessage.get('h2')!.parentIds).toEqual([nodeOf('h1')]);
    // The model answers everything said since its last message: both questions of this branch.
    expect(byMessage.get('ai-2')!.parentIds).toEqual([nodeOf('h1'), nodeOf('h2')].sort());
    expect(byMessage.get('result-call-2')!.parentIds).toEqual([byCall.get('call-2')!.id]);
    expect(byMessage.get('ai-4')!.parentIds).toEqual([nodeOf('result-call-2')]);

    // 7. Both reviews are resolved approvals of the thread, and were announced live.
    const resolved = await gql(
      `query($t: ID!) { approvals(filter: { state: RESOLVED, threadId: $t }) {
        edges { node { decision response prompt } } } }`,
      { t: weftId },
    );
    const decisions = resolved.approvals.edges.map(
      (e: { node: { decision: string; prompt: { interrupts: Array<{ value: unknown }> } } }) => ({
        decision: e.node.decision,
        query: (e.node.prompt.interrupts[0]!.value as { toolCall: { args: { query: string } } })
          .toolCall.args.query,
      }),
    );
    expect(decisions).toHaveLength(2);
    expect(decisions.map((d: { query: string }) => d.query).sort()).toEqual([
      'find langgraph instead',
      'find weft',
    ]);
    await until(() => approvalEvents.length === 2);
    expect(approvalEvents.map((e) => e.runId)).toEqual([approved.runId, again.runId]);

    // 8. The subscriber saw every node, in sequence, exactly as stored.
    await until(() => seen.length >= data.thread.nodeCount);
    expect(seen).toEqual(nodes);
    expect(seen.map((n) => n.sequence)).toEqual(nodes.map((_, i) => i + 1));
  });
}

/** Waits for what a live stream delivers (the test's own timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('LangGraph StateGraph on WeftSaver [sqlite]', () => suite('sqlite'));
describeWithPostgres('LangGraph StateGraph on WeftSaver', () => suite('postgres'));
