/**
 * Level of detail for large threads: above GROUP_ABOVE nodes the graph draws one node per step
 * (the nodes one log entry wrote) instead of one per node, sized by how many it holds, labelled
 * with its entry, run and kinds, with an edge wherever a node of one step has a parent in
 * another. A step expands into its nodes on demand. Steps follow the log, so their graph is
 * acyclic like the nodes': a parent is always written in the same or an earlier entry.
 */
import type { GraphNode } from './graph';

/** Threads with more nodes than this open grouped by step. */
export const GROUP_ABOVE = 5000;
/** A step with more nodes than this does not expand (it would draw a graph this large again). */
export const EXPAND_MAX = 5000;

export interface Step {
  /** Its key in the graph (never a node id: those start with two letters and an underscore). */
  key: string;
  logIndex: number;
  /** The run most of its nodes belong to. */
  runId: string | null;
  members: GraphNode[];
  expanded: boolean;
}

export class Steps {
  private readonly byKey = new Map<string, Step>();
  private readonly ofNode = new Map<string, Step>();

  get nodeCount(): number {
    return this.ofNode.size;
  }

  /** Adds a node to its step; returns the step and whether it is new. */
  add(node: GraphNode): { step: Step; created: boolean } {
    const key = `step:${node.logIndex}`;
    let step = this.byKey.get(key);
    const created = step === undefined;
    if (step === undefined) {
      step = {
        key,
        logIndex: node.logIndex,
        runId: node.runId ?? null,
        members: [],
        expanded: false,
      };
      this.byKey.set(key, step);
    }
    step.members.push(node);
    this.ofNode.set(node.id, step);
    return { step, created };
  }

  step(key: string): Step | undefined {
    return this.byKey.get(key);
  }

  of(nodeId: string): Step | undefined {
    return this.ofNode.get(nodeId);
  }

  node(nodeId: string): GraphNode | undefined {
    return this.ofNode.get(nodeId)?.members.find((m) => m.id === nodeId);
  }

  /** What stands for the node in the graph: itself in an expanded step, else its step. */
  drawnKey(nodeId: string): string | undefined {
    const step = this.ofNode.get(nodeId);
    if (step === undefined) return undefined;
    return step.expanded ? nodeId : step.key;
  }

  all(): Step[] {
    return [...this.byKey.values()];
  }

  /** Every node, in sequence order. */
  nodes(): GraphNode[] {
    return this.all()
      .flatMap((s) => s.members)
      .sort((a, b) => a.sequence - b.sequence);
  }
}

/** The kind most of a step's nodes have, and its kinds with their counts, most first. */
export function kindsOf(step: Step): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const m of step.members) counts.set(m.kind, (counts.get(m.kind) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}

export function stepLabel(step: Step): string {
  const kinds = kindsOf(step)
    .slice(0, 3)
    .map(([kind, n]) => `${n.toLocaleString()} ${kind.toLowerCase().replace('_', ' ')}`)
    .join(', ');
  const run = step.runId === null ? '' : ` · run ${step.runId.slice(0, 8)}`;
  const count = step.members.length;
  return `step #${step.logIndex} · ${count.toLocaleString()} node${count === 1 ? '' : 's'}${run} (${kinds})`;
}

/** A step's size on screen: grows with the log of its count, from a single node's. */
export const stepSize = (step: Step) => 3 + Math.log2(step.members.length) / 2;
