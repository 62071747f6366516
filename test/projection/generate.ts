/**
 * Deterministic agent threads for projection tests and the benchmark: a system prompt, then turns
 * of goal → inferences, reads (many repeated, at a few offsets), tool results, resource versions,
 * semantic memory, verifications and an answer; occasionally a side branch that stays a head.
 * Payload keys are written in non-canonical order on purpose, so a state read back from canonical
 * storage differs in key order from the one built in memory.
 */
import {
  appendNodes,
  createGraph,
  type GraphState,
  type NodeDraft,
} from '../../src/core/graph/index.js';
import type { JsonValue } from '../../src/core/json.js';

export function lcg(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const WORDS = (
  'agent plan file config cache retry token budget deploy schema index query parse build test ' +
  'lint module server client request response error handler route store queue worker stream ' +
  'event state graph node edge frontier resource memory goal answer check verify write read ' +
  'patch branch merge commit review docs api auth key limit'
).split(' ');
const PATHS = ['src/config.ts', 'src/server.ts', 'src/store/index.ts', 'README.md', 'docs/api.md'];
const MEMORY_KEYS = ['style', 'deadline', 'owner', 'stack'];

export interface GeneratedThread {
  graph: GraphState;
  /** The append calls that built it, in order (each a batch of drafts). */
  batches: NodeDraft[][];
}

export interface GenerateOptions {
  seed: number;
  /** Roughly how many nodes (the last turn may overshoot a little). */
  nodes: number;
  /** Extra text per payload, in words (default 12). */
  words?: number;
}

export const GENERATED_AT = '2026-03-01T00:00:00.000Z';

export function generateThread(options: GenerateOptions): GeneratedThread {
  const rand = lcg(options.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const text = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const words = options.words ?? 12;
  let graph = must(createGraph());
  const batches: NodeDraft[][] = [];
  const append = (drafts: NodeDraft[]) => {
    const result = appendNodes(graph, drafts, GENERATED_AT);
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    graph = result.value.graph;
    batches.push(drafts);
    return result.value.nodes;
  };
  append([{ kind: 'system', payload: { text: `You are a careful agent. ${text(words)}` } }]);
  let turn = 0;
  while (graph.count < options.nodes) {
    turn++;
    append([{ kind: 'goal', payload: { text: `turn ${turn}: ${text(6)}` } }]);
    const steps = 3 + Math.floor(rand() * 6);
    for (let s = 0; s < steps && graph.count < options.nodes; s++) {
      const r = rand();
      if (r < 0.35) {
        const path = pick(PATHS);
        const offset = rand() < 0.7 ? 0 : 200;
        append([
          {
            kind: 'tool_call',
            payload: { name: 'read_file', args: { path, offset }, id: `c${turn}.${s}` },
          },
          {
            kind: 'tool_result',
            payload: { content: `${path} @${offset}: ${text(words)}`, tool: 'read_file' },
          },
        ]);
      } else if (r < 0.5) {
        const path = pick(PATHS);
        append([
          {
            kind: 'resource',
            resourceKey: `resource:file:${path}`,
            payload: { version: turn * 100 + s, path, content: text(words) },
          },
        ]);
      } else if (r < 0.58) {
        append([
          {
            kind: 'semantic',
            payload: {
              type: pick(['memory', 'preference']),
              key: pick(MEMORY_KEYS),
              content: text(5),
            },
          },
        ]);
      } else if (r < 0.66) {
        append([{ kind: 'verification', payload: { passed: rand() < 0.8, detail: text(words) } }]);
      } else if (r < 0.7) {
        append([
          { kind: 'inference', payload: { text: `side note ${text(words)}` }, advance: false },
        ]);
      } else {
        append([{ kind: 'inference', payload: { thought: text(words), step: s } }]);
      }
    }
    append([{ kind: 'answer', payload: { text: `done ${turn}: ${text(words)}` } }]);
  }
  return { graph, batches };
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

export type { JsonValue };
