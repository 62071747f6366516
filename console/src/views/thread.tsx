/**
 * One thread: the causal graph (live), the event timeline (live), the time-travel slider over log
 * indices (graph, frontier and memory as of that index from `state(atIndex)`, runs from
 * `runsAt(atIndex)`), the details of a node, resources and memory with their versions, strict
 * verify, fork at an index, and its runs.
 */
import { useClient, useQuery } from '@urql/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  type ConsoleEventFragment,
  ConsoleEventsDocument,
  ConsoleForkDocument,
  ConsoleNodeAppendedDocument,
  ConsoleNodeDocument,
  ConsoleStateAtDocument,
  ConsoleThreadDocument,
  ConsoleThreadEventsDocument,
  ConsoleThreadNodesDocument,
  ConsoleVerifyDocument,
} from '../generated/graphql';
import { CausalGraphView, type GraphNode, KIND_COLOURS } from '../graph';
import { useFeed, useScopes } from '../live';
import { href } from '../router';
import { Json, Section, time } from './common';
import { RunsTable } from './runs';

const PAGE = 200;
const PARALLEL = 4;
const TIMELINE = 200;

declare global {
  interface Window {
    /** Set by browser automation before the page loads, to be handed `weftConsole`. */
    weftConsoleAutomation?: boolean;
    /** For automation only: what the graph draws now (the browser tests read it). */
    weftConsole?: { graph?: CausalGraphView };
  }
}

/** Whether automation asked for the graph; a person's page gets no global handle on it. */
const automated = () => window.weftConsoleAutomation === true;

export function ThreadView({ id }: { id: string }) {
  const client = useClient();
  const scopes = useScopes();
  const [thread, refetchThread] = useQuery({ query: ConsoleThreadDocument, variables: { id } });
  const container = useRef<HTMLDivElement>(null);
  const view = useRef<CausalGraphView | undefined>(undefined);
  const maxSequence = useRef<number | undefined>(undefined);
  const [graphState, setGraphState] = useState<'loading' | 'ready' | string>('loading');
  const [drawn, setDrawn] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [events, setEvents] = useState<ConsoleEventFragment[]>([]);
  const lastIndex = useRef<number | undefined>(undefined);
  const [logLength, setLogLength] = useState<number | undefined>(undefined);
  const [atIndex, setAtIndex] = useState<number | null>(null);
  const t = thread.data?.thread;

  // The graph: every node, in pages of PAGE (PARALLEL at a time), then live appends.
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const graph = new CausalGraphView(element, (node) => setSelected(node));
    view.current = graph;
    if (automated()) window.weftConsole = { graph };
    let cancelled = false;
    (async () => {
      const first = await client
        .query(ConsoleThreadNodesDocument, { id, first: PAGE }, { requestPolicy: 'network-only' })
        .toPromise();
      if (first.error) throw first.error;
      const th = first.data?.thread;
      if (!th) throw new Error(`no thread ${id}`);
      const byId = new Map<string, GraphNode>();
      const add = (nodes: readonly GraphNode[]) => {
        for (const n of nodes) byId.set(n.id, n);
      };
      add(th.nodes.edges.map((e) => e.node));
      let more = th.nodes.pageInfo.hasNextPage;
      let after = Math.max(-1, ...[...byId.values()].map((n) => n.sequence));
      while (more && !cancelled) {
        const starts = Array.from({ length: PARALLEL }, (_, k) => after + k * PAGE);
        const pages = await Promise.all(
          starts.map((s) =>
            client
              .query(
                ConsoleThreadNodesDocument,
                { id, first: PAGE, afterSequence: s },
                { requestPolicy: 'network-only' },
              )
              .toPromise(),
          ),
        );
        for (const page of pages) {
          if (page.error) throw page.error;
          add(page.data?.thread?.nodes.edges.map((e) => e.node) ?? []);
        }
        const last = pages[pages.length - 1]?.data?.thread?.nodes;
        more = last?.pageInfo.hasNextPage ?? false;
        after = Math.max(after, ...[...byId.values()].map((n) => n.sequence));
      }
      if (cancelled) return;
      const nodes = [...byId.values()].sort((a, b) => a.sequence - b.sequence);
      maxSequence.current = nodes.length === 0 ? -1 : nodes[nodes.length - 1]!.sequence;
      graph.load(nodes, []);
      setDrawn(graph.size);
      setGraphState('ready');
    })().catch((error: unknown) => {
      if (!cancelled) setGraphState(`The graph could not be drawn: ${String(error)}`);
    });
    return () => {
      cancelled = true;
      graph.kill();
      if (automated() && window.weftConsole?.graph === graph) window.weftConsole = {};
    };
  }, [client, id]);

  useEffect(() => {
    if (t?.frontier && atIndex === null) view.current?.setFrontier(t.frontier.map((f) => f.id));
  }, [t?.frontier, atIndex]);
  useEffect(() => view.current?.select(selected), [selected]);

  useFeed(
    ConsoleNodeAppendedDocument,
    () =>
      graphState === 'ready' && maxSequence.current !== undefined
        ? { threadId: id, afterSequence: maxSequence.current }
        : null,
    (data) => {
      const node = data.nodeAppended;
      if (node.sequence <= (maxSequence.current ?? -1)) return;
      maxSequence.current = node.sequence;
      view.current?.append([node]);
      setDrawn(view.current?.size ?? 0);
    },
    [id, graphState === 'ready'],
  );

  // The timeline: the last TIMELINE entries, then live.
  const [initialEvents] = useQuery({
    query: ConsoleEventsDocument,
    variables: { id, last: TIMELINE },
    requestPolicy: 'network-only',
  });
  useEffect(() => {
    const edges = initialEvents.data?.thread?.events.edges;
    if (edges === undefined || lastIndex.current !== undefined) return;
    const list = edges.map((e) => e.node).reverse();
    lastIndex.current = list[0]?.index ?? -1;
    setLogLength((lastIndex.current ?? -1) + 1);
    setEvents(list);
  }, [initialEvents.data]);
  const refresh = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useFeed(
    ConsoleThreadEventsDocument,
    () =>
      lastIndex.current === undefined ? null : { threadId: id, afterIndex: lastIndex.current },
    (data) => {
      const event = data.threadEvents;
      if (event.index <= (lastIndex.current ?? -1)) return;
      lastIndex.current = event.index;
      setEvents((list) => [event, ...list].slice(0, TIMELINE));
      setLogLength(event.index + 1);
      // The summary (frontier, memory, counts) follows at most once a second: refetching it on
      // every commit of a busy thread would compete with the commits themselves.
      if (refresh.current === undefined) {
        refresh.current = setTimeout(() => {
          refresh.current = undefined;
          refetchThread({ requestPolicy: 'network-only' });
        }, 1000);
      }
    },
    [id, initialEvents.data !== undefined],
  );

  // Time travel: the state as of atIndex (null: now, live).
  const [past] = useQuery({
    query: ConsoleStateAtDocument,
    variables: { id, atIndex: atIndex ?? 0 },
    pause: atIndex === null,
  });
  const pastState =
    atIndex === null ? undefined : (past.data?.thread?.state as PastState | undefined);
  const [shownIndex, setShownIndex] = useState<number | null>(null);
  useEffect(() => {
    const graph = view.current;
    if (graph === undefined || graphState !== 'ready') return;
    if (atIndex === null) {
      graph.showOnly(null);
      graph.setFrontier(t?.frontier.map((f) => f.id) ?? []);
      setShownIndex(null);
    } else if (pastState !== undefined && past.operation?.variables.atIndex === atIndex) {
      graph.showOnly(new Set(pastState.nodes.map((n) => n.id)));
      graph.setFrontier(pastState.frontier);
      setShownIndex(atIndex);
    }
  }, [atIndex, pastState, graphState]);

  if (thread.error) return <p class="error">{thread.error.message}</p>;
  if (thread.data && t === null)
    return <p class="error">No thread {id} (or not visible to this key).</p>;
  const length = logLength ?? t?.logLength ?? 0;
  const travelling = atIndex !== null;
  return (
    <div class="view thread">
      <h1>
        Thread <code>{id}</code>
        {t && t.waiting.totalCount > 0 && <span class="badge">waiting for a human</span>}
      </h1>
      {t && (
        <p class="counts">
          {t.nodeCount} nodes · {length} log entries · spend {t.spend.totalTokens} tokens, $
          {t.spend.costUsd.toFixed(4)}
          {t.forkedFrom && (
            <>
              {' '}
              · forked from{' '}
              <a href={href.thread(t.forkedFrom.thread.id)}>{t.forkedFrom.thread.id}</a> at{' '}
              {t.forkedFrom.upToIndex}
            </>
          )}{' '}
          · <a href={href.projection(id)}>projection</a>
        </p>
      )}
      <div class="travel">
        <label for="travel">
          Time travel:{' '}
          {travelling ? `as of log index ${atIndex} of ${length}` : `now (${length} entries, live)`}
        </label>
        <input
          id="travel"
          type="range"
          min={0}
          max={length}
          step={1}
          value={atIndex ?? length}
          data-shown-index={shownIndex ?? 'live'}
          onInput={(e) => {
            const k = Number(e.currentTarget.value);
            setAtIndex(k >= length ? null : k);
          }}
        />
        {travelling && (
          <button type="button" onClick={() => setAtIndex(null)}>
            Back to now
          </button>
        )}
        {scopes.write && <ForkButton threadId={id} upToIndex={atIndex ?? length} />}
      </div>
      <div class="thread-grid">
        <section class="panel graph-panel" aria-label="Causal graph">
          <h2>Causal graph</h2>
          <GraphControls view={view} />
          <div
            ref={container}
            class="graph"
            // biome-ignore lint/a11y/noNoninteractiveTabindex: the graph takes keys (pan, zoom)
            tabIndex={0}
            role="application"
            aria-roledescription="causal graph"
            aria-label={`Causal graph, ${drawn} nodes. Arrow keys pan, plus and minus zoom, 0 resets.`}
            data-graph-state={graphState === 'ready' ? 'ready' : 'loading'}
            data-node-count={drawn}
            onKeyDown={(e) => {
              const g = view.current;
              if (!g) return;
              const step = 0.1;
              const keys: Record<string, () => void> = {
                ArrowLeft: () => g.pan(-step, 0),
                ArrowRight: () => g.pan(step, 0),
                ArrowUp: () => g.pan(0, step),
                ArrowDown: () => g.pan(0, -step),
                '+': () => g.zoomIn(),
                '=': () => g.zoomIn(),
                '-': () => g.zoomOut(),
                '0': () => g.reset(),
              };
              const action = keys[e.key];
              if (action) {
                e.preventDefault();
                action();
              }
            }}
          />
          {graphState !== 'ready' && (
            <p role="status" class={graphState === 'loading' ? '' : 'error'}>
              {graphState === 'loading' ? 'Loading the graph…' : graphState}
            </p>
          )}
          <Legend />
          {t && t.frontier.length > 0 && (
            <p>
              Frontier:{' '}
              {t.frontier.map((f) => (
                <button key={f.id} type="button" class="chip" onClick={() => setSelected(f.id)}>
                  {f.id.slice(0, 12)}
                </button>
              ))}
            </p>
          )}
        </section>
        <NodeDetails threadId={id} nodeId={selected} onSelect={setSelected} />
      </div>
      <div class="thread-grid">
        <Section title="Timeline">
          <ol class="timeline" aria-live="polite" aria-relevant="additions">
            {events.map((e) => (
              <li key={e.index} data-event-index={e.index}>
                <span class="index">#{e.index}</span> <span class="type">{e.type}</span>{' '}
                <time dateTime={e.recordedAt}>{time(e.recordedAt)}</time>
              </li>
            ))}
          </ol>
        </Section>
        <MemoryPanel
          memory={t?.memory ?? []}
          resources={t?.resources ?? []}
          past={pastState}
          atIndex={shownIndex}
        />
      </div>
      <div class="thread-grid">
        <Section title={atIndex === null ? 'Runs' : `Runs as of index ${atIndex}`}>
          <RunsTable threadId={id} atIndex={atIndex} />
        </Section>
        <VerifyPanel id={id} />
      </div>
    </div>
  );
}

interface PastState {
  version: number;
  nodes: Array<{
    id: string;
    kind: string;
    payload: unknown;
    resourceKey?: string;
    sequence: number;
  }>;
  frontier: string[];
}

function GraphControls({ view }: { view: { current: CausalGraphView | undefined } }) {
  return (
    <div class="graph-controls">
      <button type="button" onClick={() => view.current?.zoomIn()} aria-label="Zoom in">
        +
      </button>
      <button type="button" onClick={() => view.current?.zoomOut()} aria-label="Zoom out">
        −
      </button>
      <button type="button" onClick={() => view.current?.reset()}>
        Fit
      </button>
    </div>
  );
}

function Legend() {
  return (
    <ul class="legend" aria-label="Legend">
      {Object.entries(KIND_COLOURS).map(([kind, colour]) => (
        <li key={kind}>
          <span class="swatch" style={{ background: colour }} /> {kind.toLowerCase()}
        </li>
      ))}
      <li>
        <span class="swatch ring taint" /> tainted
      </li>
      <li>
        <span class="swatch ring derived" /> derived taint
      </li>
      <li>
        <span class="swatch line version" /> resource version chain
      </li>
    </ul>
  );
}

function NodeDetails({
  threadId,
  nodeId,
  onSelect,
}: {
  threadId: string;
  nodeId: string | null;
  onSelect: (id: string) => void;
}) {
  const [result] = useQuery({
    query: ConsoleNodeDocument,
    variables: { threadId, id: nodeId ?? '' },
    pause: nodeId === null,
  });
  const node = nodeId === null ? undefined : result.data?.causalNode;
  const link = (n: { id: string; kind?: string }) => (
    <li key={n.id}>
      <button type="button" class="link" onClick={() => onSelect(n.id)}>
        {n.kind ? `${n.kind.toLowerCase()} ` : ''}
        {n.id}
      </button>
    </li>
  );
  return (
    <section class="panel details" aria-label="Node details">
      <h2>Node details</h2>
      {nodeId === null && <p>Select a node in the graph (or a frontier chip) to see it here.</p>}
      {node && (
        <div data-node-id={node.id}>
          <dl>
            <dt>Id</dt>
            <dd>
              <code>{node.id}</code>
            </dd>
            <dt>Kind</dt>
            <dd>{node.kind}</dd>
            <dt>Sequence / log index</dt>
            <dd>
              {node.sequence} / {node.logIndex}
            </dd>
            {node.resourceKey && (
              <>
                <dt>Resource</dt>
                <dd>
                  {node.resourceKey}
                  {node.supersedes && <> (supersedes {node.supersedes.id.slice(0, 12)})</>}
                  {node.supersededBy && <> (superseded by {node.supersededBy.id.slice(0, 12)})</>}
                </dd>
              </>
            )}
            {node.taint && (
              <>
                <dt>Taint</dt>
                <dd class="taint">
                  {node.taint.derived ? 'derived from ' : ''}
                  {node.taint.source}
                  {node.taint.toolName ? ` (${node.taint.toolName})` : ''}
                </dd>
              </>
            )}
            {node.run && (
              <>
                <dt>Run</dt>
                <dd>
                  {node.run.id} ({node.run.status.toLowerCase()})
                </dd>
              </>
            )}
            {node.usage !== null && node.usage !== undefined && (
              <>
                <dt>Usage</dt>
                <dd>
                  <Json value={node.usage} />
                </dd>
              </>
            )}
          </dl>
          <h3>Payload</h3>
          <Json value={node.payload} />
          <h3>Parents</h3>
          <ul>{node.parentIds.map((p) => link({ id: p }))}</ul>
          <h3>Children</h3>
          <ul>{node.children.map(link)}</ul>
          <h3>Ancestors (6 levels)</h3>
          <ul>{node.ancestors.map(link)}</ul>
        </div>
      )}
    </section>
  );
}

function MemoryPanel({
  memory,
  resources,
  past,
  atIndex,
}: {
  memory: ReadonlyArray<{
    type: string;
    key: string;
    content: unknown;
    tainted: boolean;
    history: ReadonlyArray<{ id: string; logIndex: number; payload: unknown }>;
  }>;
  resources: ReadonlyArray<{ id: string; resourceKey?: string | null; logIndex: number }>;
  past: PastState | undefined;
  atIndex: number | null;
}) {
  if (past !== undefined && atIndex !== null) {
    const heads = new Map<string, PastState['nodes'][number]>();
    for (const n of past.nodes) {
      if (n.resourceKey && (n.kind === 'semantic' || n.kind === 'resource'))
        heads.set(n.resourceKey, n);
    }
    return (
      <Section title={`Memory and resources as of index ${atIndex}`}>
        <ul class="memory">
          {[...heads.entries()].map(([key, n]) => (
            <li key={key}>
              <strong>{key}</strong> <Json value={n.payload} />
            </li>
          ))}
          {heads.size === 0 && <li>None yet.</li>}
        </ul>
      </Section>
    );
  }
  return (
    <Section title="Memory and resources">
      <ul class="memory">
        {memory.map((m) => (
          <li key={`${m.type}:${m.key}`}>
            <details>
              <summary>
                <strong>
                  {m.type}:{m.key}
                </strong>{' '}
                {m.tainted && <span class="badge taint">tainted</span>} ({m.history.length} version
                {m.history.length === 1 ? '' : 's'})
              </summary>
              <Json value={m.content} />
              <ol reversed>
                {m.history.map((h) => (
                  <li key={h.id}>
                    index {h.logIndex}: <code>{JSON.stringify(h.payload)}</code>
                  </li>
                ))}
              </ol>
            </details>
          </li>
        ))}
        {resources.map((r) => (
          <li key={r.id}>
            <strong>{r.resourceKey}</strong> current version <code>{r.id.slice(0, 12)}</code> (index{' '}
            {r.logIndex})
          </li>
        ))}
        {memory.length === 0 && resources.length === 0 && <li>No memory or resources yet.</li>}
      </ul>
    </Section>
  );
}

function VerifyPanel({ id }: { id: string }) {
  const [requested, setRequested] = useState(0);
  const [result] = useQuery({
    query: ConsoleVerifyDocument,
    variables: { id },
    pause: requested === 0,
    requestPolicy: 'network-only',
    context: { requested } as never,
  });
  const report = requested === 0 ? undefined : result.data?.thread?.verify;
  return (
    <Section title="Verify">
      <button type="button" onClick={() => setRequested((n) => n + 1)}>
        Verify the log (strict)
      </button>
      {result.fetching && <p role="status">Verifying…</p>}
      {report && (
        <p role="status" class={report.ok ? 'ok' : 'error'} data-verify={report.ok ? 'ok' : 'bad'}>
          {report.ok
            ? `OK: ${report.checkedEntries} entries replayed, every hash and signature checked.`
            : `FAILED at index ${report.firstBadIndex}: ${report.message}`}
        </p>
      )}
    </Section>
  );
}

function ForkButton({ threadId, upToIndex }: { threadId: string; upToIndex: number }) {
  const client = useClient();
  const [error, setError] = useState<string | undefined>(undefined);
  return (
    <>
      <button
        type="button"
        onClick={async () => {
          const r = await client.mutation(ConsoleForkDocument, { threadId, upToIndex }).toPromise();
          const fork = r.data?.forkThread;
          if (fork?.__typename === 'ForkThreadSuccess') location.hash = href.thread(fork.thread.id);
          else
            setError(
              r.error?.message ?? (fork && 'message' in fork ? fork.message : 'fork failed'),
            );
        }}
      >
        Fork at index {upToIndex}
      </button>
      {error && <span class="error">{error}</span>}
    </>
  );
}
