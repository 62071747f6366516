import { canonicalJson } from '../canonical.js';
import { type CausalNode, type GraphState, getNode } from '../graph/index.js';
import type { JsonObject, JsonValue } from '../json.js';
import { clip, cut, excerpt } from './text.js';
import type { ClusterPin, PeripheralCluster, SelectionReason } from './types.js';

/*
 * The prompt is plain lines: no empty line, no line starting or ending with whitespace, no raw
 * line break inside a line (payloads are canonical JSON, other text is collapsed to one line) —
 * what keeps token estimates additive over lines (tokens.ts).
 *
 *   <DIGEST> … </DIGEST> <BIG_BRAIN> … </BIG_BRAIN> <PERIPHERAL> … </PERIPHERAL>
 *   <FOCUS> … </FOCUS> <TIMELINE> … </TIMELINE>
 *
 * Payloads shrink in steps: level 0 shows them in full; each further level cuts long strings,
 * long arrays and objects and deep nesting shorter, and shows fewer context lines.
 */

export interface ShrinkLevel {
  /** Longest string value kept (code units). */
  string: number;
  /** Most array items / object entries kept. */
  items: number;
  /** Deepest nesting kept. */
  depth: number;
  timeline: number;
  peripheral: number;
  bigBrain: number;
  /** Length of the one-line excerpts in TIMELINE and PERIPHERAL. */
  excerpt: number;
}

export const SHRINK_LEVELS: readonly ShrinkLevel[] = Object.freeze([
  {
    string: Infinity,
    items: Infinity,
    depth: Infinity,
    timeline: 12,
    peripheral: 6,
    bigBrain: 8,
    excerpt: 160,
  },
  { string: 2000, items: 50, depth: 10, timeline: 8, peripheral: 4, bigBrain: 6, excerpt: 120 },
  { string: 400, items: 20, depth: 6, timeline: 6, peripheral: 3, bigBrain: 4, excerpt: 80 },
  { string: 120, items: 8, depth: 4, timeline: 4, peripheral: 2, bigBrain: 3, excerpt: 60 },
  { string: 32, items: 3, depth: 2, timeline: 0, peripheral: 0, bigBrain: 2, excerpt: 40 },
]);
export const MAX_LEVEL = SHRINK_LEVELS.length - 1;

export const LAYER_TAGS = ['BIG_BRAIN', 'PERIPHERAL', 'FOCUS', 'TIMELINE'] as const;

const compareKeys = new Intl.Collator().compare;

/** A copy of `value` cut to the limits of `level`; `value` itself at level 0. */
export function shrinkPayload(value: JsonValue, level: ShrinkLevel): JsonValue {
  return level.string === Infinity ? value : shrink(value, level, 0);
}

function shrink(value: JsonValue, level: ShrinkLevel, depth: number): JsonValue {
  if (typeof value === 'string') {
    if (value.length <= level.string) return value;
    const kept = cut(value, level.string);
    return `${kept}…[+${value.length - kept.length} chars]`;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (depth >= level.depth) return `[${value.length} items]`;
    const out = value.slice(0, level.items).map((item) => shrink(item, level, depth + 1));
    if (value.length > level.items) out.push(`…[+${value.length - level.items} items]`);
    return out;
  }
  const keys = Object.keys(value).sort(compareKeys);
  if (depth >= level.depth) return `{${keys.length} keys}`;
  const out: JsonObject = {};
  for (const key of keys.slice(0, level.items)) {
    out[key] = shrink(value[key] as JsonValue, level, depth + 1);
  }
  if (keys.length > level.items) out['…'] = `+${keys.length - level.items} keys`;
  return out;
}

/** `#<seq> <kind> <id> [key=<resourceKey>] <- <#parents|root> [<reasons>] <payload>`. */
export function focusLine(
  graph: GraphState,
  node: CausalNode,
  reasons: readonly SelectionReason[],
  level: ShrinkLevel,
): string {
  const parents = node.parents
    .map((id) => getNode(graph, id)?.sequence ?? 0)
    .sort((a, b) => a - b)
    .map((seq) => `#${seq}`);
  const key = node.resourceKey === undefined ? '' : ` key=${JSON.stringify(node.resourceKey)}`;
  return (
    `#${node.sequence} ${node.kind} ${node.id}${key} <- ${parents.length > 0 ? parents.join(',') : 'root'}` +
    ` [${reasons.join(',')}] ${canonicalJson(shrinkPayload(node.payload, level))}`
  );
}

/** `#<seq> <kind>: <excerpt>` */
export function timelineLine(node: CausalNode, level: ShrinkLevel): string {
  const text = excerpt(node.payload, level.excerpt);
  return text === '' ? `#${node.sequence} ${node.kind}` : `#${node.sequence} ${node.kind}: ${text}`;
}

/** `[<id>] <label> size=<n> seq=<first>-<last>` */
export function bigBrainLine(pin: ClusterPin): string {
  return `[${pin.id}] ${label(pin.label)} size=${pin.size} seq=${pin.firstSequence}-${pin.lastSequence}`;
}

/** `[<id>] <label> size=<n> near=<k> latest=#<seq> <kind>: <excerpt>` */
export function peripheralLine(
  cluster: PeripheralCluster,
  nearest: CausalNode,
  level: ShrinkLevel,
): string {
  const text = excerpt(nearest.payload, level.excerpt);
  return (
    `[${cluster.id}] ${label(cluster.label)} size=${cluster.size} near=${cluster.near}` +
    ` latest=#${nearest.sequence} ${nearest.kind}${text === '' ? '' : ': ' + text}`
  );
}

/** Topics come from tool names and resource keys: one line, bounded. */
const label = (text: string): string => clip(text.replace(/\s+/g, ' ').trim(), 80) || '-';

/** Lines of one layer, tags included. */
export const layerLines = (tag: string, lines: readonly string[]): string[] => [
  `<${tag}>`,
  ...lines,
  `</${tag}>`,
];
