/**
 * Redacting nodes: their payloads withheld for good, their ids, edges and places in the log kept.
 *
 * A node's payload is stored once for every thread whose history holds it (a fork shares its
 * source's rows), so redacting it is redacting it for all of them: the thread asked, the thread
 * whose rows hold the node, and every fork that reads those rows. Each of them that is live gets
 * a `nodes_redacted` entry, and the rows are rewritten (store/read-model/redaction.ts), in one
 * transaction; subscribers of each see the entry. See core/thread/redaction.ts for how the
 * entries that created the nodes stay verifiable.
 */
import { canonicalJson } from '../core/canonical.js';
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { getNode } from '../core/graph/index.js';
import { isTombstone, tombstone } from '../core/graph/tombstone.js';
import type { JsonValue } from '../core/json.js';
import type { LogEntry } from '../core/log/index.js';
import {
  commitEvent,
  getNodeMeta,
  type NodesRedactedEvent,
  redactEntryText,
  redactionDigest,
  type ThreadState,
} from '../core/thread/index.js';
import { projectEntry, type ReadModelChanges } from '../store/read-model/index.js';
import { indexSpans, segmentOfSequence } from '../store/read-model/lineage.js';
import type { RedactionRows, Sharer } from '../store/read-model/redaction.js';
import { invalid } from './checks.js';
import { carrying, committedViews } from './committed.js';
import type { Runtime } from './engine.js';
import { type IdempotencyClaim, idempotencyRecord } from './idempotency.js';
import { answeredAs, type Located, locateThread } from './tenancy.js';
import type { RedactNodesInput, RedactNodesResult } from './types.js';

/** Nodes one redaction may name. */
export const MAX_REDACT_NODES = 1000;
/** Characters of a reason (it is stored in every tombstone). */
export const MAX_REDACT_REASON = 1000;

export async function redactNodes(
  rt: Runtime,
  input: RedactNodesInput,
  claim: IdempotencyClaim | undefined,
  tenant: string | undefined,
  checkRef: (value: unknown, path: string) => Result<string>,
): Promise<Result<RedactNodesResult>> {
  const checked = checkRef(input.threadId, '$.threadId');
  if (!checked.ok) return checked;
  const shape = checkInput(input);
  if (shape !== undefined) return err(shape);
  const located = await locateThread(rt.tenants, input.threadId, tenant);
  if (!located.ok) return located;
  const at = located.value;
  const ids = [...new Set(input.nodeIds)];
  // Forks of the lineage wait for the redaction (fork.ts), so none is made from what it rewrites.
  return rt.inLineage(at.key, (root) =>
    rt.exclusive(at.key, () => redactIn(rt, root, at, ids, input, claim)),
  );
}

async function redactIn(
  rt: Runtime,
  root: string,
  at: Located,
  ids: readonly string[],
  input: RedactNodesInput,
  claim: IdempotencyClaim | undefined,
): Promise<Result<RedactNodesResult>> {
  for (let attempt = 1; ; attempt++) {
    const latest = await rt.load(at.key, true);
    if (!latest.ok) return answeredAs(latest, at);
    const state = latest.value;
    const unknown = ids.filter((id) => getNode(state.graph, id) === undefined);
    if (unknown.length > 0) {
      return err({
        code: 'NOT_FOUND',
        message: `thread ${at.id} has no node ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` (and ${unknown.length - 5} more)` : ''}`,
        entity: 'Node',
        id: unknown[0]!,
      });
    }
    const pending = ids.filter((id) => !isTombstone(getNode(state.graph, id)!.payload));
    const already = ids.filter((id) => !pending.includes(id));
    if (pending.length === 0) {
      return ok({
        threadId: at.id,
        redactedNodeIds: [],
        alreadyRedactedNodeIds: already,
        logLength: state.length,
        stateHash: state.stateHash,
      });
    }
    const planned = await plan(rt, at.key, state, pending, input);
    if (!planned.ok) return answeredAs(planned, at);
    const { commits, rows, states } = planned.value;
    const mine = states.get(at.key)!;
    const response: RedactNodesResult = {
      threadId: at.id,
      redactedNodeIds: pending,
      alreadyRedactedNodeIds: already,
      logLength: mine.next.length,
      stateHash: mine.next.stateHash,
    };
    // The answer shows the asked thread as the commit left it, built from its new state (no
    // expiry: the entry does not hold it, so whoever shows it reads it).
    const views = committedViews(mine.changes, mine.next, {
      tenantId: rt.tenants.known(at.key),
      salted: (await rt.salts.of(at.key)) !== undefined,
      expiresAt: undefined,
    });
    const written = await rt.store.commitRedaction(
      commits,
      rows,
      idempotencyRecord(claim, at.key, response, planned.value.now),
    );
    if (!written.ok) return written;
    if (written.value === 'written') {
      // Every state of the lineage derived before this commit stops being served, whichever
      // thread it is of; the ones just made are the first of the new generation.
      rt.cache.rewritten(root);
      const under = rt.cache.derivation(root);
      for (const [threadId, s] of states) {
        rt.cache.set(threadId, s.next, { from: s.prev, texts: [s.text], under });
      }
      // Their later snapshots are gone: the next ones must not be deltas against them.
      for (const { threadId } of rows.snapshots) rt.forgetSnapshots(threadId);
      for (const [threadId, s] of states) {
        await rt.publish({
          threadId,
          entries: [s.entry],
          effects: [],
          logLength: s.next.length,
        });
      }
      return ok(carrying(response, views));
    }
    if (attempt >= rt.maxAttempts) {
      return err({
        code: 'CONFLICT',
        message: `thread ${at.id} (or a fork sharing its nodes) kept changing while its nodes were redacted: retry`,
        threadId: at.id,
        expectedIndex: state.length,
        actualIndex: (await rt.store.getLogLength(at.key)) ?? state.length,
      });
    }
  }
}

function checkInput(input: RedactNodesInput): WeftError | undefined {
  const { nodeIds, reason } = input;
  if (!Array.isArray(nodeIds) || nodeIds.length === 0) {
    return invalid('$.nodeIds', 'name at least one node');
  }
  if (nodeIds.length > MAX_REDACT_NODES) {
    return invalid(
      '$.nodeIds',
      `at most ${MAX_REDACT_NODES} nodes per redaction (got ${nodeIds.length})`,
    );
  }
  for (let i = 0; i < nodeIds.length; i++) {
    const id = nodeIds[i];
    if (typeof id !== 'string' || id.length === 0 || id.length > 256) {
      return invalid(
        `$.nodeIds[${i}]`,
        'a node id is a non-empty string of at most 256 characters',
      );
    }
  }
  if (typeof reason !== 'string' || reason.trim().length === 0) {
    return invalid('$.reason', 'say why the nodes are redacted (a non-empty reason)');
  }
  if (reason.length > MAX_REDACT_REASON) {
    return invalid(
      '$.reason',
      `a reason is at most ${MAX_REDACT_REASON} characters (got ${reason.length})`,
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(reason)) {
    return invalid('$.reason', 'a reason may not contain control characters');
  }
  return undefined;
}

interface ThreadRedaction {
  prev: ThreadState;
  next: ThreadState;
  entry: LogEntry;
  text: string;
  changes: ReadModelChanges;
}

interface Planned {
  now: string;
  commits: ReadModelChanges[];
  rows: RedactionRows;
  states: Map<string, ThreadRedaction>;
}

/** The rows to rewrite and the entry of every live thread holding the nodes. */
async function plan(
  rt: Runtime,
  key: string,
  state: ThreadState,
  pending: readonly string[],
  input: RedactNodesInput,
): Promise<Result<Planned>> {
  const now = rt.clock.now();
  const payload = tombstone({ reason: input.reason, redactedAt: now });
  const payloadText = canonicalJson(payload);
  const lineage = await rt.store.lineage(key);
  // The nodes by the entry that created them, and the thread whose rows hold that entry.
  const groups = new Map<number, { holder: string; index: number; ids: string[] }>();
  for (const id of pending) {
    const node = getNode(state.graph, id)!;
    const index = getNodeMeta(state, id)!.logIndex;
    const holder = segmentOfSequence(lineage, node.sequence).threadId;
    const group = groups.get(index) ?? { holder, index, ids: [] };
    group.ids.push(id);
    groups.set(index, group);
  }
  // Who reads each holder's rows, asked once per holder from its earliest redacted entry.
  const readers = new Map<string, Promise<Sharer[]>>();
  const readersOf = (holder: string) => {
    let found = readers.get(holder);
    if (found === undefined) {
      const from = Math.min(
        ...[...groups.values()].filter((g) => g.holder === holder).map((g) => g.index),
      );
      found = Promise.all([rt.store.getLogLength(holder), rt.store.sharersOf(holder, from)]).then(
        ([length, sharers]) => [
          { threadId: holder, live: length !== undefined, reach: Number.POSITIVE_INFINITY },
          ...sharers,
        ],
      );
      readers.set(holder, found);
    }
    return found;
  };
  const rows: RedactionRows = {
    nodes: [],
    entries: [],
    snapshots: [],
    answers: { threadIds: [], payload: payloadText },
  };
  /** Per live thread: the redacted nodes its history holds (the thread asked holds them all). */
  const recorders = new Map<string, NodesRedactedEvent['nodes']>([[key, []]]);
  const firstIndex = new Map<string, number>();
  const touch = (threadId: string, index: number) =>
    firstIndex.set(threadId, Math.min(firstIndex.get(threadId) ?? index, index));
  for (const group of groups.values()) {
    const [text] = await rt.store.readEntryTexts(key, group.index, group.index + 1);
    if (text === undefined) return err(invalid('$.nodeIds', `entry ${group.index} is missing`));
    const entry = JSON.parse(text) as LogEntry;
    if (entry.event.type === 'state_imported') {
      return err(
        invalid(
          '$.nodeIds',
          `node ${group.ids[0]} was imported with the thread's first entry (state_imported); imported nodes cannot be redacted — delete the thread instead`,
        ),
      );
    }
    // All the nodes: an entry may create one and record another again (see repeatsOf).
    const redacted = redactEntryText(text, new Set(pending), payload);
    if (redacted.replaced < group.ids.length) {
      return err(invalid('$.nodeIds', `entry ${group.index} does not hold all of its nodes`));
    }
    const digest = redactionDigest(redacted.text);
    const created = await rt.store.createdPayloads(group.holder, group.index);
    const sequences = new Set(group.ids.map((id) => getNode(state.graph, id)!.sequence));
    rows.entries.push({
      threadId: group.holder,
      index: group.index,
      recordedAt: new Date(entry.recordedAt),
      text: redacted.text,
      created: created.map((c) =>
        sequences.has(c.sequence) ? { sequence: c.sequence, payload: payloadText } : c,
      ),
      nodeIds: group.ids,
    });
    for (const sequence of sequences) {
      rows.nodes.push({ threadId: group.holder, sequence, payload: payloadText });
    }
    const named = group.ids.map((id) => ({ id, index: group.index, digest }));
    for (const reader of await readersOf(group.holder)) {
      if (reader.reach <= group.index) continue;
      touch(reader.threadId, group.index);
      if (!reader.live || reader.threadId === key) continue;
      recorders.set(reader.threadId, [...(recorders.get(reader.threadId) ?? []), ...named]);
    }
    recorders.get(key)!.push(...named);
    touch(key, group.index);
  }
  const creators = new Set([...groups.values()].map((g) => `${g.holder}\u0000${g.index}`));
  const from = Math.min(...groups.keys()) + 1;
  const live = [...recorders.keys()];
  for (const repeat of await repeatsOf(rt, live, new Set(pending), from, creators, payload)) {
    const digest = redactionDigest(repeat.text);
    rows.entries.push({
      threadId: repeat.holder,
      index: repeat.index,
      recordedAt: repeat.recordedAt,
      text: repeat.text,
      created: await rt.store.createdPayloads(repeat.holder, repeat.index),
      nodeIds: repeat.nodeIds,
    });
    const named = repeat.nodeIds.map((id) => ({ id, index: repeat.index, digest }));
    const holderLive = (await rt.store.getLogLength(repeat.holder)) !== undefined;
    const readers: Sharer[] = [
      { threadId: repeat.holder, live: holderLive, reach: Number.POSITIVE_INFINITY },
      ...(await rt.store.sharersOf(repeat.holder, repeat.index)),
    ];
    for (const reader of readers) {
      if (reader.reach <= repeat.index) continue;
      touch(reader.threadId, repeat.index);
      if (!reader.live) continue;
      recorders.set(reader.threadId, [...(recorders.get(reader.threadId) ?? []), ...named]);
    }
  }
  for (const [threadId, fromIndex] of firstIndex) rows.snapshots.push({ threadId, fromIndex });
  // Every thread whose history holds a node may have answered a command with it.
  rows.answers.threadIds = [...firstIndex.keys()];

  const committed = await commitRedactions(rt, key, state, recorders, input, now);
  return committed.ok ? ok({ now, rows, ...committed.value }) : committed;
}

/** One nodes_redacted entry per live thread that holds the nodes, and its read-model changes. */
async function commitRedactions(
  rt: Runtime,
  key: string,
  state: ThreadState,
  recorders: ReadonlyMap<string, NodesRedactedEvent['nodes']>,
  input: RedactNodesInput,
  now: string,
): Promise<Result<Pick<Planned, 'commits' | 'states'>>> {
  const commits: ReadModelChanges[] = [];
  const states = new Map<string, ThreadRedaction>();
  // The thread asked first: the transaction's first commit carries its idempotency record.
  for (const [threadId, nodes] of [...recorders].sort(([a], [b]) =>
    a === key ? -1 : b === key ? 1 : a < b ? -1 : 1,
  )) {
    const prev = threadId === key ? ok(state) : await rt.load(threadId, true);
    if (!prev.ok) return prev;
    const event: NodesRedactedEvent = {
      type: 'nodes_redacted',
      reason: input.reason,
      nodes,
      ...(input.actor === undefined ? {} : { actor: input.actor }),
    };
    const committed = commitEvent(prev.value, event, rt.stamp(now), rt.machineOptions);
    if (!committed.ok) return committed;
    const { entry, effects, text, parts } = committed.value;
    const changes = projectEntry(
      prev.value,
      committed.value.state,
      effects,
      entry,
      threadId,
      text,
      parts,
    );
    commits.push(changes);
    states.set(threadId, { prev: prev.value, next: committed.value.state, entry, text, changes });
  }
  return ok({ commits, states });
}

/** An entry that recorded a redacted node again, its text as it reads redacted. */
interface Repeat {
  holder: string;
  index: number;
  recordedAt: Date;
  text: string;
  nodeIds: string[];
}

/**
 * The entries after the ones that created the nodes that record some of them again: an append of
 * content identical to an existing node is answered with that node, and its entry holds the
 * node, payload included. Read through each live thread holding the nodes (`threadIds`), from
 * `from` on, each (holder, index) once; `skip`: the creating entries, rewritten already. The
 * redaction is rare and this reads those logs whole, which it can afford.
 */
async function repeatsOf(
  rt: Runtime,
  threadIds: readonly string[],
  ids: ReadonlySet<string>,
  from: number,
  skip: ReadonlySet<string>,
  payload: JsonValue,
): Promise<Repeat[]> {
  const seen = new Set(skip);
  const found: Repeat[] = [];
  const quoted = [...ids].map((id) => JSON.stringify(id));
  for (const threadId of threadIds) {
    const lineage = await rt.store.lineage(threadId);
    const texts = await rt.store.readEntryTexts(threadId, from);
    for (let k = 0; k < texts.length; k++) {
      const index = from + k;
      const holder = indexSpans(lineage, index, index + 1)[0]?.threadId ?? threadId;
      const at = `${holder}\u0000${index}`;
      if (seen.has(at)) continue;
      seen.add(at);
      const text = texts[k]!;
      if (!quoted.some((id) => text.includes(id))) continue;
      const redacted = redactEntryText(text, ids, payload);
      if (redacted.replaced === 0) continue;
      const entry = JSON.parse(text) as LogEntry;
      const named = new Set<string>();
      for (const id of ids) if (text.includes(JSON.stringify(id))) named.add(id);
      found.push({
        holder,
        index,
        recordedAt: new Date(entry.recordedAt),
        text: redacted.text,
        nodeIds: [...named],
      });
    }
  }
  return found;
}
