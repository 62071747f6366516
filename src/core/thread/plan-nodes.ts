/**
 * Planning node appends: the drafts are previewed on the graph, so the recorded nodes carry the
 * ids and parents the append resolves, and node usage is checked against the token totals.
 */
import { err, ok, type Result, type WeftError } from '../errors.js';
import {
  createSemanticDraft,
  type GraphState,
  getNode,
  type NodeDraft,
  type NodeKind,
  previewAppend,
} from '../graph/index.js';
import { isTombstone } from '../graph/tombstone.js';
import type { JsonValue } from '../json.js';
import { checkTokenRoom, runTokenTotals, type TokenTotals } from '../run/index.js';
import type { NodesAppendedEvent, NodeTaint, NodeUsage, RecordedNode } from './events.js';
import type { ThreadState } from './state.js';

export interface NodeInput {
  kind: NodeKind;
  payload: JsonValue;
  parents?: string[];
  resourceKey?: string;
  advance?: boolean;
  runId?: string;
  taint?: NodeTaint;
  usage?: NodeUsage;
}

export const notFound = (entity: string, id: string, message: string): WeftError => ({
  code: 'NOT_FOUND',
  message,
  entity,
  id,
});

export function planAppendNodes(
  state: ThreadState,
  inputs: readonly NodeInput[],
  now: string,
): Result<NodesAppendedEvent> {
  if (inputs.length === 0) {
    return err({
      code: 'VALIDATION_FAILED',
      message: 'appendNodes needs at least one node',
      issues: [{ path: '$.nodes', message: 'empty list' }],
    });
  }
  for (const input of inputs) {
    if (input.runId !== undefined && !state.runs.has(input.runId)) {
      return err(notFound('Run', input.runId, `run ${input.runId} does not exist in this thread`));
    }
  }
  const resolved = resolveNodes(state.graph, inputs.map(toDraft), now);
  if (!resolved.ok) return resolved;
  const overflow = checkNodeUsage(
    state,
    inputs,
    resolved.value.map((n) => n.id),
  );
  if (overflow !== undefined) return err(overflow);
  return ok({
    type: 'nodes_appended',
    nodes: resolved.value.map((node, i) => withExtras(node, inputs[i]!)),
  });
}

/** Refuses node usage that would take a token total past MAX_TOKEN_TOTAL (the batch summed). */
function checkNodeUsage(
  state: ThreadState,
  inputs: readonly NodeInput[],
  ids: readonly string[],
): WeftError | undefined {
  const added = new Map<string, TokenTotals>();
  const plus = (key: string, base: TokenTotals | undefined): TokenTotals | undefined => {
    const more = added.get(key);
    if (base === undefined) return more;
    return more === undefined
      ? base
      : { input: base.input + more.input, output: base.output + more.output };
  };
  for (const [i, input] of inputs.entries()) {
    const usage = input.usage;
    if (usage === undefined) continue;
    const run = input.runId === undefined ? undefined : state.runs.get(input.runId);
    const totals: Array<TokenTotals | undefined> = [
      plus('thread', { input: state.spend.inputTokens, output: state.spend.outputTokens }),
    ];
    if (run !== undefined) {
      const [runTotal, used, model] = runTokenTotals(run, usage.model, ids[i]);
      totals.push(
        plus(`run\u0000${input.runId}`, runTotal),
        plus(`run\u0000${input.runId}`, used),
        plus(`model\u0000${input.runId}\u0000${usage.model}`, model ?? { input: 0, output: 0 }),
      );
    }
    const overflow = checkTokenRoom(totals, usage.inputTokens, usage.outputTokens, {
      input: `$.nodes[${i}].usage.inputTokens`,
      output: `$.nodes[${i}].usage.outputTokens`,
    });
    if (overflow !== undefined) return overflow;
    const keys = ['thread'];
    if (run !== undefined)
      keys.push(`run\u0000${input.runId}`, `model\u0000${input.runId}\u0000${usage.model}`);
    for (const key of keys) {
      const more = added.get(key) ?? { input: 0, output: 0 };
      added.set(key, {
        input: more.input + usage.inputTokens,
        output: more.output + usage.outputTokens,
      });
    }
  }
  return undefined;
}

function toDraft(input: NodeInput): NodeDraft {
  const draft: NodeDraft = { kind: input.kind, payload: input.payload };
  if (input.parents !== undefined) draft.parents = input.parents;
  if (input.resourceKey !== undefined) draft.resourceKey = input.resourceKey;
  if (input.advance !== undefined) draft.advance = input.advance;
  return draft;
}

/** Previews the append to learn ids and resolved parents, leaving the graph untouched. */
export function resolveNodes(
  graph: GraphState,
  drafts: NodeDraft[],
  now: string,
): Result<Array<Omit<RecordedNode, 'runId' | 'taint' | 'usage'>>> {
  const appended = previewAppend(graph, drafts, now);
  if (!appended.ok) return appended;
  // Identical content names the existing node, and the entry would record its content again:
  // of a redacted node, that is the erased payload written back.
  const erased = appended.value.nodes.findIndex(
    (node, i) => !appended.value.created[i] && isTombstone(getNode(graph, node.id)?.payload),
  );
  if (erased >= 0) {
    const id = appended.value.nodes[erased]!.id;
    return err({
      code: 'VALIDATION_FAILED',
      message: `node ${id} has this content and was redacted: its content cannot be written again (a retry answers from its idempotency key; otherwise send other content)`,
      issues: [{ path: `$.nodes[${erased}]`, message: `node ${id} was redacted` }],
    });
  }
  return ok(
    appended.value.nodes.map((node, i) => {
      const recorded: Omit<RecordedNode, 'runId' | 'taint' | 'usage'> = {
        id: node.id,
        kind: node.kind,
        parents: node.parents,
        payload: node.payload,
      };
      if (node.resourceKey !== undefined) recorded.resourceKey = node.resourceKey;
      const advance = drafts[i]!.advance;
      if (advance !== undefined) recorded.advance = advance;
      return recorded;
    }),
  );
}

function withExtras(
  node: Omit<RecordedNode, 'runId' | 'taint' | 'usage'>,
  input: NodeInput,
): RecordedNode {
  const recorded: RecordedNode = { ...node };
  if (input.runId !== undefined) recorded.runId = input.runId;
  if (input.taint !== undefined) recorded.taint = input.taint;
  if (input.usage !== undefined) recorded.usage = input.usage;
  return recorded;
}

export interface RememberInput {
  type: string;
  key: string;
  content: JsonValue;
  runId?: string;
}

export function planRemember(
  state: ThreadState,
  input: RememberInput,
  now: string,
): Result<NodesAppendedEvent> {
  const draft = createSemanticDraft(state.graph, {
    type: input.type,
    key: input.key,
    content: input.content,
  });
  if (!draft.ok) return draft;
  const node: NodeInput = { ...draft.value };
  if (input.runId !== undefined) node.runId = input.runId;
  return planAppendNodes(state, [node], now);
}
