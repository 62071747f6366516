/**
 * The causal graph on screen: graphology holds it, sigma.js draws it with WebGL (interactive
 * well past 10,000 nodes), and the layout is layered — each node one rank below its deepest
 * parent (graphology-dag's topological generations), ordered within its rank by the mean
 * position of its parents (one barycentric sweep). Live appends take the next slot of their rank,
 * so nothing already drawn moves. Beyond LARGE nodes drawn: no labels, plain lines, edges hidden
 * while the camera moves. Beyond GROUP_ABOVE nodes a thread opens grouped by step
 * (graph-groups.ts), each step expanding into its nodes on demand.
 */
import { createNodeBorderProgram } from '@sigma/node-border';
import Graph from 'graphology';
import { topologicalGenerations } from 'graphology-dag';
import Sigma from 'sigma';
import {
  EXPAND_MAX,
  GROUP_ABOVE,
  kindsOf,
  type Step,
  Steps,
  stepLabel,
  stepSize,
} from './graph-groups';

export interface GraphNode {
  id: string;
  kind: string;
  parentIds: string[];
  sequence: number;
  logIndex: number;
  /** The payload's text in a line (CausalNode.preview); null when it has none or was redacted. */
  preview?: string | null;
  resourceKey?: string | null;
  runId?: string | null;
  taint?: { source: string; derived: boolean } | null;
  /** Set when the payload was withheld (redactNodes). */
  redaction?: { reason: string; redactedAt: string } | null;
}

export const KIND_COLOURS: Record<string, string> = {
  SYSTEM: '#6b7280',
  GOAL: '#7c3aed',
  INFERENCE: '#2563eb',
  TOOL_CALL: '#0891b2',
  TOOL_RESULT: '#059669',
  ANSWER: '#16a34a',
  VERIFICATION: '#ca8a04',
  RESOURCE: '#ea580c',
  SEMANTIC: '#db2777',
  PROTOCOL_ERROR: '#dc2626',
};

/** A redacted node is filled black, like a redaction bar; its ring keeps its kind (or taint). */
export const REDACTED = '#111827';
const TAINT = '#dc2626';
const DERIVED_TAINT = '#f59e0b';
const VERSION_EDGE = '#ea580c';
const EDGE = '#94a3b8';
const LARGE = 2000;

/** A ring in `borderColor` (taint: red when direct, amber when derived) around the kind colour. */
const BorderProgram = createNodeBorderProgram({
  borders: [
    { size: { value: 0.3 }, color: { attribute: 'borderColor' } },
    { size: { fill: true }, color: { attribute: 'color' } },
  ],
});

/** What the node says when it has text (its kind is its colour too), else its kind and id. */
export const label = (
  node: Pick<GraphNode, 'id' | 'kind' | 'preview'> & { redaction?: unknown },
) => {
  const kind = node.kind.toLowerCase().replace('_', ' ');
  if (node.redaction) return `redacted ${kind} ${node.id.slice(3, 9)}`;
  return node.preview ? `${kind} · ${node.preview}` : `${kind} ${node.id.slice(3, 9)}`;
};

export class CausalGraphView {
  private readonly graph = new Graph({ multi: false, type: 'directed' });
  private renderer: Sigma | undefined;
  private readonly rankOf = new Map<string, number>();
  private readonly slotsOfRank = new Map<number, number>();
  private readonly lastVersion = new Map<string, string>();
  private frontier = new Set<string>();
  private selected: string | null = null;
  private marker: HTMLElement | undefined;
  private visible: Set<string> | null = null;
  /** The thread's steps when it opened grouped (above GROUP_ABOVE nodes); else undefined. */
  private steps: Steps | undefined;
  /** The index time travel shows (null: now). */
  private shownBefore: number | null = null;

  constructor(
    private readonly container: HTMLElement,
    private readonly onSelect: (id: string) => void,
    /** Called when a step was expanded or the steps collapsed (by a click in the graph too). */
    private readonly onStepsChanged: () => void = () => undefined,
  ) {}

  /** The nodes of the thread (drawn one by one or inside their steps). */
  get size(): number {
    return this.steps?.nodeCount ?? this.graph.order;
  }

  /** Whether the thread is drawn grouped by step. */
  get grouped(): boolean {
    return this.steps !== undefined;
  }

  /** The step a node is drawn in, while that step is not expanded (grouped threads only). */
  collapsedStepOf(
    id: string,
  ): { logIndex: number; count: number; expandable: boolean } | undefined {
    const step = this.steps?.of(id);
    if (step === undefined || step.expanded) return undefined;
    const count = step.members.length;
    return { logIndex: step.logIndex, count, expandable: count <= EXPAND_MAX };
  }

  /** Replaces the whole graph (nodes in sequence order). */
  load(nodes: readonly GraphNode[], frontier: readonly string[]): void {
    this.graph.clear();
    this.rankOf.clear();
    this.slotsOfRank.clear();
    this.lastVersion.clear();
    this.frontier = new Set(frontier);
    this.steps = nodes.length > GROUP_ABOVE ? new Steps() : undefined;
    if (this.steps !== undefined) {
      for (const node of nodes) this.steps.add(node);
      for (const step of this.steps.all()) this.graph.addNode(step.key, this.stepAttributes(step));
      for (const node of nodes) this.linkDrawn(node);
    } else {
      for (const node of nodes) this.graph.addNode(node.id, this.attributes(node));
      for (const node of nodes) this.link(node);
    }
    const generations = topologicalGenerations(this.graph);
    const x = new Map<string, number>();
    generations.forEach((generation, rank) => {
      const keyed = generation.map((id) => {
        const parents = this.graph.inNeighbors(id).filter((p) => this.rankOf.has(p) || x.has(p));
        const mean =
          parents.length === 0
            ? Number.POSITIVE_INFINITY
            : parents.reduce((sum, p) => sum + (x.get(p) ?? 0), 0) / parents.length;
        return { id, mean, sequence: this.graph.getNodeAttribute(id, 'sequence') as number };
      });
      keyed.sort((a, b) => a.mean - b.mean || a.sequence - b.sequence);
      keyed.forEach(({ id }, slot) => {
        x.set(id, slot);
        this.place(id, rank, slot);
      });
      this.slotsOfRank.set(rank, keyed.length);
    });
    this.render();
  }

  /** Adds live nodes (parents first); a node already drawn is left as it is. */
  append(nodes: readonly GraphNode[]): void {
    if (this.steps !== undefined) {
      for (const node of nodes) this.appendGrouped(this.steps, node);
      if (this.renderer === undefined) this.render();
      return;
    }
    for (const node of nodes) {
      if (this.graph.hasNode(node.id)) continue;
      this.graph.addNode(node.id, this.attributes(node));
      this.link(node);
      const rank = node.parentIds.reduce((r, p) => Math.max(r, (this.rankOf.get(p) ?? -1) + 1), 0);
      const slot = this.slotsOfRank.get(rank) ?? 0;
      this.slotsOfRank.set(rank, slot + 1);
      this.place(node.id, rank, slot);
      if (this.visible !== null) this.graph.setNodeAttribute(node.id, 'hidden', true);
    }
    if (this.renderer === undefined) this.render();
  }

  setFrontier(ids: readonly string[]): void {
    const before = this.frontier;
    this.frontier = new Set(ids);
    // Only the nodes that joined or left it: a live thread's frontier is refreshed every second.
    for (const id of new Set([...before, ...this.frontier])) {
      if (before.has(id) !== this.frontier.has(id) && this.graph.hasNode(id)) this.decorate(id);
    }
  }

  /** Time travel: only `ids` are drawn (null: all). */
  showOnly(ids: ReadonlySet<string> | null): void {
    this.visible = ids === null ? null : new Set(ids);
    const visible = this.visible;
    // One update of every node (one redraw), not an event per node: on 100,000 nodes the
    // difference is most of a time-travel step.
    this.graph.updateEachNodeAttributes(
      (id, attributes) => {
        attributes.hidden = visible !== null && !visible.has(id);
        return attributes;
      },
      { attributes: ['hidden'] },
    );
  }

  /**
   * Shows the nodes written before log entry `index` (all with null): the graph as of that
   * index, known from the nodes' own log indexes without asking the server. Returns their ids.
   */
  showBefore(index: number | null): ((id: string) => boolean) | null {
    this.shownBefore = index;
    if (index === null) {
      this.showOnly(null);
      return null;
    }
    const shown = new Set<string>();
    this.graph.forEachNode((id, attributes) => {
      if ((attributes.logIndex as number) < index) shown.add(id);
    });
    this.showOnly(shown);
    const steps = this.steps;
    return (id) => {
      const logIndex = steps?.of(id)?.logIndex ?? this.graph.getNodeAttribute(id, 'logIndex');
      return typeof logIndex === 'number' && logIndex < index;
    };
  }

  /**
   * Marks `id` as selected with a ring drawn over the graph, not by changing the node: any change
   * of a node's attributes makes sigma process and draw every node and edge again, which with a
   * software GL (no GPU) took over a second per selection on 30,000 nodes.
   */
  select(id: string | null): void {
    this.selected = id;
    this.placeMarker();
  }

  /** Puts the selection ring on the selected node as drawn now (hidden when it is not drawn). */
  private placeMarker(): void {
    const renderer = this.renderer;
    const id = this.selected;
    if (this.marker === undefined) {
      if (id === null) return;
      this.marker = document.createElement('div');
      this.marker.className = 'graph-selection';
      this.marker.setAttribute('aria-hidden', 'true');
      this.marker.append(document.createElement('span'));
      this.container.append(this.marker);
    }
    const marker = this.marker;
    // A node inside a step not expanded: the ring is on its step.
    const key = id === null ? undefined : (this.steps?.drawnKey(id) ?? id);
    const data =
      key === undefined || renderer === undefined || !this.graph.hasNode(key)
        ? undefined
        : renderer.getNodeDisplayData(key);
    if (data === undefined || data.hidden) {
      marker.hidden = true;
      return;
    }
    const { x, y } = renderer!.framedGraphToViewport(data);
    const r = Math.max(7, renderer!.scaleSize(data.size) + 4);
    marker.hidden = false;
    marker.style.width = `${2 * r}px`;
    marker.style.height = `${2 * r}px`;
    marker.style.transform = `translate(${x - r}px, ${y - r}px)`;
    marker.dataset.nodeId = id!;
    // A frontier node's label is drawn by sigma already: written twice, the two overlap.
    const member = key !== id ? this.steps?.node(id!) : undefined;
    marker.firstElementChild!.textContent =
      member !== undefined
        ? `${label(member)} (in step #${member.logIndex})`
        : this.frontier.has(id!)
          ? ''
          : (this.graph.getNodeAttribute(key!, 'label') as string);
  }

  /** Marks nodes already drawn as redacted (a nodes_redacted entry arrived); others are ignored. */
  markRedacted(nodes: readonly GraphNode[]): void {
    for (const node of nodes) {
      // Inside a step: the step's copy of it is redacted too (what it expands into).
      const member = this.steps?.node(node.id);
      if (member !== undefined && node.redaction) member.redaction = node.redaction;
      if (!node.redaction || !this.graph.hasNode(node.id)) continue;
      this.graph.mergeNodeAttributes(node.id, {
        redacted: true,
        label: label(node),
        color: REDACTED,
      });
      this.decorate(node.id);
    }
  }

  /** The redacted nodes, in no particular order. */
  redactedNodeIds(): string[] {
    if (this.steps !== undefined) {
      return this.steps
        .all()
        .flatMap((s) => s.members)
        .filter((m) => m.redaction)
        .map((m) => m.id);
    }
    return this.graph.filterNodes((_id, attributes) => attributes.redacted === true);
  }

  /** The nodes sigma draws now (its display data, hidden ones left out). */
  drawnNodeIds(): string[] {
    const renderer = this.renderer;
    if (renderer === undefined) return [];
    return this.graph.filterNodes((id) => {
      const display = renderer.getNodeDisplayData(id);
      return display !== undefined && !display.hidden;
    });
  }

  zoomIn(): void {
    void this.renderer?.getCamera().animatedZoom({ duration: 120 });
  }

  zoomOut(): void {
    void this.renderer?.getCamera().animatedUnzoom({ duration: 120 });
  }

  reset(): void {
    void this.renderer?.getCamera().animatedReset({ duration: 120 });
  }

  /** Pans by a fraction of the viewport. */
  pan(dx: number, dy: number): void {
    const camera = this.renderer?.getCamera();
    if (camera === undefined) return;
    const state = camera.getState();
    camera.setState({ x: state.x + dx * state.ratio, y: state.y + dy * state.ratio });
  }

  cameraState(): { x: number; y: number; ratio: number } | undefined {
    const state = this.renderer?.getCamera().getState();
    return state === undefined ? undefined : { x: state.x, y: state.y, ratio: state.ratio };
  }

  kill(): void {
    this.renderer?.kill();
    this.renderer = undefined;
  }

  /**
   * Creates the renderer, even for an empty graph: making sigma's WebGL contexts and compiling its
   * programs holds the page for hundreds of milliseconds with a software GL, which belongs to
   * opening the thread, not to the first live append (every event behind it waited).
   */
  private render(): void {
    if (this.renderer !== undefined) return;
    const large = this.graph.order > LARGE;
    this.renderer = new Sigma(this.graph, this.container, {
      defaultNodeType: 'border',
      nodeProgramClasses: { border: BorderProgram },
      defaultEdgeType: large ? 'line' : 'arrow',
      renderLabels: !large,
      renderEdgeLabels: false,
      hideEdgesOnMove: large,
      labelRenderedSizeThreshold: 3,
      labelFont: 'system-ui, sans-serif',
      // Labels in the theme's text colour (the canvas cannot read CSS variables itself).
      labelColor: { color: getComputedStyle(this.container).color || '#0f172a' },
      zIndex: true,
      minCameraRatio: 0.001,
      maxCameraRatio: 10,
    });
    this.renderer.on('clickNode', ({ node }) => {
      const step = this.steps?.step(node);
      if (step === undefined) this.onSelect(node);
      else this.expand(step);
    });
    // The selection ring follows the node as the camera moves or the graph is drawn again.
    this.renderer.on('afterRender', () => this.placeMarker());
    this.warmUp(this.renderer);
  }

  /**
   * Draws one invisible node and edge once when the graph has no edge yet. The GL driver builds a
   * program's pipeline at its first real draw; with a software GL (no GPU, as in headless
   * Chromium) that took 150–300 ms of a held page at the first live append, each event behind it
   * waiting. Done here, it is part of opening the thread.
   */
  private warmUp(renderer: Sigma): void {
    if (this.graph.size > 0) return;
    const [a, b] = ['\u0000warm-a', '\u0000warm-b'];
    const invisible = { size: 4, color: 'rgba(0,0,0,0)', borderColor: 'rgba(0,0,0,0)', label: '' };
    this.graph.addNode(a, { ...invisible, x: 0, y: 0 });
    this.graph.addNode(b, { ...invisible, x: 1, y: 1 });
    this.graph.addDirectedEdge(a, b, { color: 'rgba(0,0,0,0)', size: 1 });
    renderer.refresh();
    this.graph.dropNode(a);
    this.graph.dropNode(b);
  }

  /** Draws the nodes of step `logIndex` in its place (grouped threads; see collapsedStepOf). */
  expandStep(nodeId: string): void {
    const step = this.steps?.of(nodeId);
    if (step !== undefined) this.expand(step);
  }

  /** Draws every step as one node again. */
  collapseSteps(): void {
    const steps = this.steps;
    if (steps === undefined) return;
    this.load(steps.nodes(), [...this.frontier]);
    if (this.visible !== null) this.showBefore(this.shownBefore);
    this.placeMarker();
    this.onStepsChanged();
  }

  private expand(step: Step): void {
    const steps = this.steps;
    if (steps === undefined || step.expanded || step.members.length > EXPAND_MAX) return;
    const { x, y } = this.graph.getNodeAttributes(step.key) as { x: number; y: number };
    const rank = this.rankOf.get(step.key) ?? 0;
    // What the step's other edges ran to: the steps (or nodes) its nodes are parents of.
    const children = this.graph.outNeighbors(step.key);
    step.expanded = true;
    this.graph.dropNode(step.key);
    // Within the step: each node one level below its deepest parent in the step, spread across
    // the step's place (a unit wide) so that the steps around it do not move.
    const depth = new Map<string, number>();
    for (const m of step.members) {
      depth.set(
        m.id,
        m.parentIds.reduce((d, p) => Math.max(d, (depth.get(p) ?? -1) + 1), 0),
      );
    }
    const levels = Math.max(...depth.values()) + 1;
    const perLevel = new Map<number, number>();
    for (const m of step.members)
      perLevel.set(depth.get(m.id)!, (perLevel.get(depth.get(m.id)!) ?? 0) + 1);
    const slot = new Map<number, number>();
    for (const m of step.members) {
      const d = depth.get(m.id)!;
      const i = slot.get(d) ?? 0;
      slot.set(d, i + 1);
      const width = perLevel.get(d)!;
      this.graph.addNode(m.id, {
        ...this.attributes(m),
        x: x + (width === 1 ? 0 : (i / (width - 1) - 0.5) * 0.9),
        y: y - (levels === 1 ? 0 : (d / levels) * 0.9),
      });
      this.rankOf.set(m.id, rank);
      this.decorate(m.id);
      if (this.visible !== null) {
        // As of a past index: the step's nodes are shown as the step was.
        if (this.visible.has(step.key)) this.visible.add(m.id);
        else this.graph.setNodeAttribute(m.id, 'hidden', true);
      }
    }
    for (const m of step.members) this.linkDrawn(m);
    // The edges from the step to later steps, now from its nodes.
    for (const child of children) {
      const later = steps.step(child);
      for (const c of later?.members ?? (steps.node(child) ? [steps.node(child)!] : [])) {
        this.linkDrawn(c);
      }
    }
    this.placeMarker();
    this.onStepsChanged();
  }

  /** An edge from each parent's drawn key to the node's (steps: between steps, or nodes). */
  private linkDrawn(node: GraphNode): void {
    const steps = this.steps!;
    const to = steps.drawnKey(node.id);
    if (to === undefined) return;
    for (const parent of node.parentIds) {
      const from = steps.drawnKey(parent);
      if (from === undefined || from === to || this.graph.hasEdge(from, to)) continue;
      this.graph.addDirectedEdge(from, to, { color: EDGE, size: 1 });
    }
  }

  private appendGrouped(steps: Steps, node: GraphNode): void {
    if (steps.of(node.id) !== undefined) return;
    const { step, created } = steps.add(node);
    if (step.expanded) {
      this.graph.addNode(node.id, this.attributes(node));
    } else if (created) {
      this.graph.addNode(step.key, this.stepAttributes(step));
    } else {
      this.graph.mergeNodeAttributes(step.key, this.stepAttributes(step));
      this.linkDrawn(node);
      return;
    }
    const key = steps.drawnKey(node.id)!;
    this.linkDrawn(node);
    const rank = this.graph
      .inNeighbors(key)
      .reduce((r, p) => Math.max(r, (this.rankOf.get(p) ?? -1) + 1), 0);
    const slot = this.slotsOfRank.get(rank) ?? 0;
    this.slotsOfRank.set(rank, slot + 1);
    this.place(key, rank, slot);
    if (this.visible !== null) this.graph.setNodeAttribute(key, 'hidden', true);
  }

  private stepAttributes(step: Step) {
    const kind = kindsOf(step)[0]?.[0] ?? 'SYSTEM';
    return {
      x: 0,
      y: 0,
      step: true,
      kind,
      sequence: step.members[0]!.sequence,
      logIndex: step.logIndex,
      taint: '',
      redacted: false,
      label: stepLabel(step),
      // Labelled where there is room (sigma's label grid): a hundred steps' labels forced overlap.
      forceLabel: false,
      size: stepSize(step),
      color: KIND_COLOURS[kind] ?? '#334155',
      borderColor: KIND_COLOURS[kind] ?? '#334155',
      hidden: false,
      zIndex: 0,
    };
  }

  private attributes(node: GraphNode) {
    return {
      x: 0,
      y: 0,
      size: 4,
      kind: node.kind,
      sequence: node.sequence,
      logIndex: node.logIndex,
      taint: node.taint ? (node.taint.derived ? 'derived' : 'direct') : '',
      redacted: Boolean(node.redaction),
      label: label(node),
      color: node.redaction ? REDACTED : (KIND_COLOURS[node.kind] ?? '#334155'),
      borderColor: KIND_COLOURS[node.kind] ?? '#334155',
      hidden: false,
      zIndex: 0,
    };
  }

  private link(node: GraphNode): void {
    for (const parent of node.parentIds) {
      if (this.graph.hasNode(parent) && !this.graph.hasEdge(parent, node.id)) {
        this.graph.addDirectedEdge(parent, node.id, { color: EDGE, size: 1 });
      }
    }
    if (node.resourceKey) {
      const previous = this.lastVersion.get(node.resourceKey);
      if (
        previous !== undefined &&
        previous !== node.id &&
        !this.graph.hasEdge(previous, node.id)
      ) {
        // The version chain of a resource (or memory key): older → newer.
        this.graph.addDirectedEdge(previous, node.id, { color: VERSION_EDGE, size: 2 });
      }
      this.lastVersion.set(node.resourceKey, node.id);
    }
  }

  private place(id: string, rank: number, slot: number): void {
    this.rankOf.set(id, rank);
    this.graph.mergeNodeAttributes(id, { x: slot, y: -rank });
    this.decorate(id);
  }

  private decorate(id: string): void {
    // A step keeps its size (from its count) and its label.
    if (this.graph.getNodeAttribute(id, 'step') === true) return;
    const taint = this.graph.getNodeAttribute(id, 'taint') as string;
    const kind = this.graph.getNodeAttribute(id, 'kind') as string;
    const frontier = this.frontier.has(id);
    this.graph.mergeNodeAttributes(id, {
      size: frontier ? 7 : taint ? 5 : 4,
      borderColor:
        taint === 'direct'
          ? TAINT
          : taint === 'derived'
            ? DERIVED_TAINT
            : (KIND_COLOURS[kind] ?? '#334155'),
      // The frontier is marked by its size and a label (sigma's highlighted layer, another WebGL
      // context redrawn every frame, held the page for hundreds of ms at its first refresh); the
      // selected node by a ring over the graph (select).
      forceLabel: frontier,
      zIndex: frontier ? 1 : 0,
    });
  }
}
