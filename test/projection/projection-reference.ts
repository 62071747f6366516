/**
 * A deliberately simple reference of the projection compiler, for the differential test: the
 * same specification (src/core/projection/*.ts header comments) written the obvious way over the
 * exported AgentState — regex tokenisation, quadratic-ish scans, full sorts, and a fitting loop
 * that renders and measures the whole prompt for every candidate. Only leaf helpers (payload
 * shrinking and excerpts, canonical JSON, score formula constants, token counters, input
 * defaults) are shared with the compiler.
 */
import { canonicalJson } from '../../src/core/canonical.js';
import { err, ok, type Result } from '../../src/core/errors.js';
import { type CausalNode, exportAgentState, type GraphState } from '../../src/core/graph/index.js';
import { sha256Hex } from '../../src/core/hash.js';
import { NODE_KINDS } from '../../src/core/identity.js';
import type { JsonObject, JsonValue } from '../../src/core/json.js';
import {
  AUTHORITY,
  type CompileOptions,
  type OmittedNode,
  type Projection,
  type ProjectionInput,
  RECENCY_SCALE,
  resolveProjectionInput,
  SCORE_WEIGHTS,
  SELECTION_REASONS,
  type SelectionReason,
  SHRINK_LEVELS,
} from '../../src/core/projection/index.js';
import { shrinkPayload } from '../../src/core/projection/render.js';
import { clip, excerpt, STOPWORDS } from '../../src/core/projection/text.js';

export type ReferenceProjection = Omit<Projection, 'nodes'>;

const MANDATORY: SelectionReason[] = [
  'latest_system',
  'latest_goal',
  'frontier',
  'current_resource',
  'recent',
];
const TIMELINE = ['goal', 'inference', 'answer', 'verification', 'protocol_error'];

function terms(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter((t) => t.length >= 2 && !STOPWORDS.has(t));
}

function leaves(value: JsonValue | undefined, out: string[]): string[] {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' && Number.isFinite(value)) out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (value !== null && typeof value === 'object')
    for (const k in value) leaves(value[k], out);
  return out;
}

const obj = (v: JsonValue): JsonObject | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
const firstString = (o: JsonObject, fields: string[]) =>
  fields.map((f) => o[f]).find((v): v is string => typeof v === 'string');

function callKeyOf(payload: JsonValue): string {
  const o = obj(payload);
  if (!o) return 'call\u0000\u0000' + canonicalJson(payload);
  const name = firstString(o, ['name', 'tool', 'toolName', 'tool_name']) ?? '';
  let args = ['args', 'arguments', 'input', 'parameters', 'params']
    .map((f) => o[f])
    .find((v) => v !== undefined);
  if (args === undefined) {
    const skip = ['id', 'callId', 'call_id', 'toolCallId', 'tool_call_id', 'name', 'tool'];
    args = Object.fromEntries(
      Object.entries(o).filter(([k]) => !skip.includes(k) && k !== 'toolName' && k !== 'tool_name'),
    );
  }
  return readKeyOf(name, args) ?? 'call\u0000' + name + '\u0000' + canonicalJson(args);
}

function readKeyOf(name: string, args: JsonValue): string | undefined {
  const o = obj(args);
  if (!/read/i.test(name) || !o) return undefined;
  const path = firstString(o, ['path', 'file', 'filePath', 'file_path', 'filename']);
  if (path === undefined) return undefined;
  const offset =
    ['offset', 'start', 'startLine', 'start_line', 'line']
      .map((f) => o[f])
      .find((v) => v !== undefined) ?? 0;
  return 'read\u0000' + path + '\u0000' + canonicalJson(offset);
}

export function referenceProjection(
  graph: GraphState,
  input: ProjectionInput = {},
  options: CompileOptions = {},
): Result<ReferenceProjection> {
  const resolved = resolveProjectionInput(input, options);
  if (!resolved.ok) return resolved;
  const { counter, targetTokens, maxPromptTokens, maxNodes, recentNodes } = resolved.value;
  const state = exportAgentState(graph);
  const nodes: CausalNode[] = state.nodes;
  const n = nodes.length;
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const at = (seq: number) => nodes[seq - 1]!;

  // Equivalence and topics
  const toolOf = (node: CausalNode): string =>
    firstString(obj(node.payload) ?? {}, ['name', 'tool', 'toolName', 'tool_name']) ?? '';
  const info = nodes.map((node) => {
    let key: string | null = null;
    let tool = toolOf(node);
    if (node.resourceKey !== undefined) key = 'resource\u0000' + node.resourceKey;
    else if (node.kind === 'tool_call') key = callKeyOf(node.payload);
    else if (node.kind === 'tool_result') {
      const call = node.parents
        .map((p) => byId.get(p)!)
        .find((p) => p.kind === 'tool_call' && p.resourceKey === undefined);
      if (call) {
        key = 'result\u0000' + callKeyOf(call.payload);
        tool = tool || toolOf(call);
      } else {
        const o = obj(node.payload);
        const args = o
          ? (['args', 'arguments', 'input', 'parameters', 'params']
              .map((f) => o[f])
              .find((v) => v !== undefined) ?? o)
          : undefined;
        const read = args === undefined ? undefined : readKeyOf(tool, args);
        key = read === undefined ? null : 'result\u0000' + read;
      }
    }
    let topic: string = node.kind;
    if (node.resourceKey !== undefined) {
      if (node.resourceKey.startsWith('semantic:'))
        topic = 'memory:' + node.resourceKey.split(':')[1];
      else {
        const k = node.resourceKey;
        const cutAt = k.lastIndexOf('/') > 0 ? k.lastIndexOf('/') : k.lastIndexOf(':');
        const scope = cutAt > 0 ? k.slice(0, cutAt) : k;
        topic = scope.startsWith('resource:') ? scope : 'resource:' + scope;
      }
    } else if (node.kind === 'system' || node.kind === 'goal') topic = node.kind;
    else if (node.kind === 'tool_call' || node.kind === 'tool_result')
      topic = 'tool:' + (tool || 'unnamed');
    const words = new Set(terms(leaves(node.payload, []).join(' ')));
    if (node.resourceKey !== undefined) for (const t of terms(node.resourceKey)) words.add(t);
    return { key, topic, words };
  });
  const newest = (seq: number): number => {
    const key = info[seq - 1]!.key;
    if (key === null) return seq;
    let last = seq;
    for (let s = 1; s <= n; s++) if (info[s - 1]!.key === key) last = s;
    return last;
  };
  const eligible = (seq: number) => newest(seq) === seq;

  // Scores
  const queryTerms = [...new Set(terms(resolved.value.query))].slice(0, 32);
  const latestOf = (kind: string) => [...nodes].reverse().find((node) => node.kind === kind);
  const goal = latestOf('goal');
  const goalTerms = goal
    ? [...new Set(terms(excerpt(goal.payload, 10_000)))]
        .slice(0, 32)
        .filter((t) => !queryTerms.includes(t))
    : [];
  const need = Math.ceil(queryTerms.length / 2);
  const qHits = (seq: number) => queryTerms.filter((t) => info[seq - 1]!.words.has(t)).length;
  const score = (seq: number): number => {
    const q = qHits(seq);
    const g = goalTerms.filter((t) => info[seq - 1]!.words.has(t)).length;
    const d = 2 * queryTerms.length + goalTerms.length;
    const lexical = d === 0 ? 0 : (2 * q + g) / d;
    return (
      SCORE_WEIGHTS.lexical * lexical +
      SCORE_WEIGHTS.recency * (1 / (1 + (n - seq) / RECENCY_SCALE)) +
      SCORE_WEIGHTS.authority * AUTHORITY[at(seq).kind]
    );
  };
  const scores = nodes.map((node) => score(node.sequence));
  const isMatch = (seq: number) => need > 0 && qHits(seq) >= need;
  const byScore = (a: number, b: number) => scores[b - 1]! - scores[a - 1]! || b - a;

  // Selection
  const reasons = new Map<number, Set<SelectionReason>>();
  const mark = (seq: number, reason: SelectionReason) => {
    const target = newest(seq);
    if (!reasons.has(target)) reasons.set(target, new Set());
    reasons.get(target)!.add(reason);
  };
  const system = latestOf('system');
  if (system) mark(system.sequence, 'latest_system');
  if (goal) mark(goal.sequence, 'latest_goal');
  for (const id of state.frontier) mark(byId.get(id)!.sequence, 'frontier');
  const heads = new Map<string, CausalNode>();
  for (const node of nodes) if (node.resourceKey !== undefined) heads.set(node.resourceKey, node);
  for (const head of heads.values()) mark(head.sequence, 'current_resource');
  const recent = nodes
    .map((node) => node.sequence)
    .filter(eligible)
    .reverse();
  for (const seq of recent.slice(0, recentNodes)) mark(seq, 'recent');
  const open = (seq: number) => !reasons.has(seq) && eligible(seq);
  const all = nodes.map((node) => node.sequence);
  if (need > 0) {
    for (const seq of all.filter((s) => isMatch(s) && open(s)).sort(byScore)) {
      if (reasons.size >= maxNodes) break;
      reasons.set(seq, new Set(['query_match']));
    }
  }
  let closure = 0;
  for (const source of [...reasons.keys()].sort((a, b) => b - a)) {
    if (closure >= 16 || reasons.size >= maxNodes) break;
    for (const seq of ancestors(source)) {
      if (closure >= 16 || reasons.size >= maxNodes) break;
      if (!open(seq)) continue;
      reasons.set(seq, new Set(['closure']));
      closure++;
    }
  }
  for (const seq of all.filter(open).sort(byScore)) {
    if (reasons.size >= maxNodes) break;
    reasons.set(seq, new Set(['relevance']));
  }
  for (const [seq, set] of reasons) if (isMatch(seq)) set.add('query_match');
  const listOf = (seq: number) => SELECTION_REASONS.filter((r) => reasons.get(seq)!.has(r));
  const mandatory = (seq: number) => MANDATORY.some((r) => reasons.get(seq)!.has(r));

  function ancestors(start: number): number[] {
    const seen = new Set([start]);
    const out: number[] = [];
    let level = [start];
    for (let d = 1; d <= 2 && level.length > 0 && out.length < 16; d++) {
      const next = [
        ...new Set(level.flatMap((s) => at(s).parents.map((p) => byId.get(p)!.sequence))),
      ]
        .filter((s) => !seen.has(s))
        .sort((a, b) => a - b);
      for (const s of next) seen.add(s);
      for (const s of next) {
        out.push(s);
        if (out.length >= 16) break;
      }
      level = next;
    }
    return out;
  }

  // Clusters
  const topics = new Map<string, number[]>();
  for (const node of nodes) {
    const t = info[node.sequence - 1]!.topic;
    topics.set(t, [...(topics.get(t) ?? []), node.sequence]);
  }
  const clusters = [...topics].map(([label, members]) => ({
    id:
      'cl_' +
      sha256Hex(
        members
          .map((s) => at(s).id)
          .sort()
          .join('\n'),
      ).slice(0, 16),
    label,
    size: members.length,
    firstSequence: members[0]!,
    lastSequence: members[members.length - 1]!,
  }));
  const fingerprint = sha256Hex(
    clusters
      .map((c) => c.id)
      .sort()
      .join('\n'),
  ).slice(0, 16);
  const bigBrain = [...clusters]
    .sort((a, b) => b.size - a.size || (a.label < b.label ? -1 : 1))
    .slice(0, SHRINK_LEVELS[0]!.bigBrain);
  const mandatorySeqs = new Set([...reasons.keys()].filter(mandatory));
  const active = state.frontier.map((id) => byId.get(id)!.sequence);
  if (goal && !active.includes(goal.sequence)) active.push(goal.sequence);
  const tally = new Map<string, { near: number; newest: number }>();
  const counted = new Set<number>();
  for (const seq of active) {
    const children = nodes.filter((c) => c.parents.includes(at(seq).id)).map((c) => c.id);
    const around = [...at(seq).parents, ...children.slice(-64)].slice(0, 64);
    for (const id of around) {
      const s = byId.get(id)!.sequence;
      if (counted.has(s) || mandatorySeqs.has(s) || !eligible(s)) continue;
      counted.add(s);
      const t = info[s - 1]!.topic;
      const entry = tally.get(t) ?? { near: 0, newest: 0 };
      tally.set(t, { near: entry.near + 1, newest: Math.max(entry.newest, s) });
    }
  }
  const peripheral = [...tally]
    .map(([label, { near, newest: latest }]) => ({
      cluster: clusters.find((c) => c.label === label)!,
      near,
      latest,
    }))
    .sort(
      (a, b) =>
        b.near - a.near || b.latest - a.latest || (a.cluster.label < b.cluster.label ? -1 : 1),
    )
    .slice(0, SHRINK_LEVELS[0]!.peripheral);
  const timeline = all
    .filter((s) => TIMELINE.includes(at(s).kind) && eligible(s))
    .slice(-SHRINK_LEVELS[0]!.timeline);
  const memory = [...heads.keys()].filter((k) => k.startsWith('semantic:')).length;
  const kindCounts = NODE_KINDS.map(
    (k) => [k, nodes.filter((node) => node.kind === k).length] as const,
  )
    .filter(([, c]) => c > 0)
    .map(([k, c]) => `${k}=${c}`);
  const digestLines = [
    `graph=${fingerprint} nodes=${n} eligible=${all.filter(eligible).length} frontier=${state.frontier.length}` +
      ` resources=${heads.size - memory} memory=${memory} clusters=${clusters.length}`,
    `kinds ${kindCounts.length > 0 ? kindCounts.join(' ') : 'none'}`,
  ];

  // Rendering
  const label = (t: string) => clip(t.replace(/\s+/g, ' ').trim(), 80) || '-';
  const render = (focus: number[], level: number) => {
    const L = SHRINK_LEVELS[level]!;
    const bb = bigBrain
      .slice(0, L.bigBrain)
      .map(
        (c) =>
          `[${c.id}] ${label(c.label)} size=${c.size} seq=${c.firstSequence}-${c.lastSequence}`,
      );
    const pp = peripheral.slice(0, L.peripheral).map(({ cluster, near, latest }) => {
      const text = excerpt(at(latest).payload, L.excerpt);
      return (
        `[${cluster.id}] ${label(cluster.label)} size=${cluster.size} near=${near} latest=#${latest} ${at(latest).kind}` +
        (text ? ': ' + text : '')
      );
    });
    const fl = focus.map((seq) => {
      const node = at(seq);
      const parents = node.parents.map((p) => byId.get(p)!.sequence).sort((a, b) => a - b);
      const key = node.resourceKey === undefined ? '' : ` key=${JSON.stringify(node.resourceKey)}`;
      return (
        `#${seq} ${node.kind} ${node.id}${key} <- ${parents.length ? parents.map((p) => '#' + p).join(',') : 'root'}` +
        ` [${listOf(seq).join(',')}] ${canonicalJson(shrinkPayload(node.payload, L))}`
      );
    });
    const tl = timeline
      .slice(timeline.length - Math.min(L.timeline, timeline.length))
      .map((seq) => {
        const text = excerpt(at(seq).payload, L.excerpt);
        return `#${seq} ${at(seq).kind}${text ? ': ' + text : ''}`;
      });
    const wrap = (tag: string, lines: string[]) => [`<${tag}>`, ...lines, `</${tag}>`];
    const prompt = [
      ...wrap('DIGEST', digestLines),
      ...wrap('BIG_BRAIN', bb),
      ...wrap('PERIPHERAL', pp),
      ...wrap('FOCUS', fl),
      ...wrap('TIMELINE', tl),
    ].join('\n');
    return {
      prompt,
      layers: {
        bigBrain: bb.join('\n'),
        peripheral: pp.join('\n'),
        focus: fl.join('\n'),
        timeline: tl.join('\n'),
      },
    };
  };
  const estimate = (prompt: string) => {
    const lines = prompt.split('\n');
    const units =
      lines.reduce((sum, line) => sum + counter.lineUnits(line), 0) +
      (lines.length - 1) * counter.newlineUnits;
    return counter.toTokens(units);
  };

  // Fitting
  const selected = [...reasons.keys()].sort((a, b) => a - b);
  const removable = selected.filter((s) => !mandatory(s) && !reasons.get(s)!.has('query_match'));
  const kept = selected.filter((s) => !removable.includes(s));
  const protectedSeqs = kept.filter((s) => !mandatory(s));
  const candidates: { focus: number[]; level: number }[] = [];
  for (let i = 0; i <= removable.length; i++) {
    candidates.push({
      focus: selected.filter((s) => !removable.slice(0, i).includes(s)),
      level: 0,
    });
  }
  for (let level = 1; level < SHRINK_LEVELS.length; level++)
    candidates.push({ focus: kept, level });
  for (let i = 1; i <= protectedSeqs.length; i++) {
    candidates.push({
      focus: kept.filter((s) => !protectedSeqs.slice(0, i).includes(s)),
      level: SHRINK_LEVELS.length - 1,
    });
  }
  const minimal = selected.filter(mandatory);
  const last = SHRINK_LEVELS.length - 1;
  const required = counter.count(render(minimal, last).prompt);
  let chosen = candidates.find((c) => {
    const { prompt } = render(c.focus, c.level);
    return estimate(prompt) <= targetTokens && counter.count(prompt) <= targetTokens;
  });
  if (chosen === undefined) {
    if (required > maxPromptTokens) {
      return err({
        code: 'PROJECTION_OVERFLOW',
        message: 'overflow',
        requiredTokens: required,
        maxPromptTokens,
      });
    }
    chosen = { focus: minimal, level: last };
  }
  const view = render(chosen.focus, chosen.level);
  const shown = new Set(chosen.focus);
  const omitted: OmittedNode[] = all
    .filter((s) => !shown.has(s))
    .sort(byScore)
    .slice(0, resolved.value.omittedLimit)
    .map((seq) => {
      const entry: OmittedNode = {
        id: at(seq).id,
        sequence: seq,
        kind: at(seq).kind,
        score: round(scores[seq - 1]!),
        reason: 'not_selected',
      };
      if (!eligible(seq)) {
        entry.reason = info[seq - 1]!.key!.startsWith('resource\u0000')
          ? 'superseded'
          : 'duplicate';
        entry.replacedBy = at(newest(seq)).id;
      } else if (reasons.has(seq)) entry.reason = 'trimmed';
      return entry;
    });
  const L = SHRINK_LEVELS[chosen.level]!;
  return ok({
    prompt: view.prompt,
    tokenEstimate: counter.count(view.prompt),
    tokenizer: counter.name,
    nodeIds: chosen.focus.map((s) => at(s).id),
    selected: chosen.focus.map((seq) => ({
      id: at(seq).id,
      sequence: seq,
      kind: at(seq).kind,
      reasons: listOf(seq),
      mandatory: mandatory(seq),
      score: round(scores[seq - 1]!),
    })),
    layers: view.layers,
    digest: digestLines.join('\n'),
    fingerprint,
    clusters: {
      bigBrain: bigBrain.slice(0, L.bigBrain),
      peripheral: peripheral.slice(0, L.peripheral).map(({ cluster, near, latest }) => ({
        ...cluster,
        near,
        nearestId: at(latest).id,
      })),
    },
    omitted,
    omittedCount: n - chosen.focus.length,
    budget: {
      projectionTargetTokens: targetTokens,
      maxPromptTokens,
      maxNodes,
      requiredTokens: required,
      shrinkLevel: chosen.level,
      trimmed: selected.length - chosen.focus.length,
    },
  });
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
