/**
 * One thread: the causal graph (live), the event timeline (live), the time-travel slider over log
 * indices (graph, frontier and memory as of that index from `state(atIndex)`, runs from
 * `runsAt(atIndex)`), the details of a node, resources and memory with their versions, strict
 * verify, fork at an index, and its runs. Redacted nodes read as redacted everywhere
 * (views/redaction.tsx), live as `nodes_redacted` entries arrive.
 */
import { useClient, useQuery } from '@urql/preact';
import { memo } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { queryUncached } from '../client';
import {
  ConsoleEarlierEventsDocument,
  ConsoleEventEntryDocument,
  type ConsoleEventHeadFragment,
  ConsoleEventsDocument,
  ConsoleForkDocument,
  ConsoleNodeAppendedDocument,
  ConsoleRedactedNodeDocument,
  ConsoleStateAtDocument,
  ConsoleThreadDocument,
  ConsoleThreadEventsDocument,
  ConsoleThreadNodesDocument,
} from '../generated/graphql';
import { CausalGraphView, type GraphNode, KIND_COLOURS, label } from '../graph';
import { useFeed, useScopes } from '../live';
import { href } from '../router';
import { DeleteThread, StartRun } from './actions';
import { Section, When } from './common';
import { Conversation } from './conversation';
import { NodeDetails } from './node';
import {
  EventBody,
  EventSummary,
  type RedactedById,
  type RedactionNote,
  redactedIdsOf,
} from './redaction';
import { RunsTable } from './runs';
import { MemoryPanel, type PastState, VerifyPanel } from './thread-panels';

const PAGE = 500;
const PARALLEL = 4;
const TIMELINE = 200;
/**
 * Frontier heads named by a chip; a wide frontier is summarised by its count. The summary reads
 * the newest FRONTIER_READ heads (and the count): a frontier can hold thousands.
 */
const FRONTIER_CHIPS = 24;

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
  /** Bumped when the graph's steps were expanded or collapsed (the controls follow). */
  const [, setStepsChanged] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [events, setEvents] = useState<TimelineEvent[]>([]);
  /** The thread whose first timeline page has come (or failed): the graph's pages wait for it. */
  const [listed, setListed] = useState<string | undefined>(undefined);
  const lastIndex = useRef<number | undefined>(undefined);
  const [logLength, setLogLength] = useState<number | undefined>(undefined);
  const [atIndex, setAtIndex] = useState<number | null>(null);
  const [hasConversation, setHasConversation] = useState(false);
  const [eventType, setEventType] = useState('');
  // Redacted nodes, as loaded and as nodes_redacted entries arrive (read again then): the graph
  // marks them, and a chip for each names them where a screen reader reaches them.
  const redactions = useRef(new Map<string, GraphNode>());
  const [redacted, setRedacted] = useState<ReadonlyArray<[string, RedactionNote]>>([]);
  const redactedById = useMemo(() => new Map(redacted), [redacted]);
  const showRedactions = () => {
    const graph = view.current;
    const nodes = [...redactions.current.values()];
    graph?.markRedacted(nodes);
    setRedacted(nodes.flatMap((n) => (n.redaction ? [[n.id, n.redaction] as const] : [])));
  };
  const t = thread.data?.thread;
  // Newest head first: the chips name the latest work.
  const frontier = useMemo(
    () => [...(t?.frontierNodes.edges ?? [])].reverse().map((e) => e.node),
    [t?.frontierNodes],
  );
  const frontierCount = t?.frontierNodes.totalCount ?? 0;
  // A thread opens with its newest head's details shown, not an empty panel; once per thread,
  // and never over the reader's own choice or at a past index.
  const autoSelected = useRef<string | undefined>(undefined);
  useEffect(() => {
    const head = frontier[0];
    if (autoSelected.current === id || atIndex !== null || head === undefined) return;
    autoSelected.current = id;
    setSelected((current) => current ?? head.id);
  }, [id, frontier, atIndex]);

  // The graph: every node, in pages of PAGE (PARALLEL at a time), then live appends. Past the
  // normalised cache: the graph keeps its own nodes, and a hundred thousand of them written into
  // the cache as well held the page (its first paint with it) for seconds and doubled its memory.
  // Its pages wait for the timeline's first: they would otherwise compete with the header and
  // the timeline for the server, and a large thread's first paint would wait behind them.
  useEffect(() => {
    const element = container.current;
    if (element === null || listed !== id) return;
    const graph = new CausalGraphView(
      element,
      (node) => setSelected(node),
      () => setStepsChanged((n) => n + 1),
    );
    view.current = graph;
    if (automated()) window.weftConsole = { graph };
    redactions.current = new Map();
    setRedacted([]);
    let cancelled = false;
    (async () => {
      const first = await queryUncached(ConsoleThreadNodesDocument, { id, first: PAGE });
      if (first.error) throw new Error(first.error);
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
            queryUncached(ConsoleThreadNodesDocument, { id, first: PAGE, afterSequence: s }),
          ),
        );
        for (const page of pages) {
          if (page.error) throw new Error(page.error);
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
      // Nodes read again for a nodes_redacted entry while the pages loaded stay in `redactions`:
      // a page read before that redaction holds them unredacted.
      for (const n of nodes) if (n.redaction) redactions.current.set(n.id, n);
      showRedactions();
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
  }, [client, id, listed === id]);

  useEffect(() => {
    if (t && atIndex === null) view.current?.setFrontier(frontier.map((f) => f.id));
  }, [frontier, atIndex]);
  // Also once the graph is drawn: it is made after the timeline, by when a node may be selected.
  useEffect(() => view.current?.select(selected), [selected, graphState]);

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
    if (initialEvents.data !== undefined || initialEvents.error !== undefined) setListed(id);
    const edges = initialEvents.data?.thread?.events.edges;
    if (edges === undefined || lastIndex.current !== undefined) return;
    const list = edges.map((e) => e.node).reverse();
    lastIndex.current = list[0]?.index ?? -1;
    setLogLength((lastIndex.current ?? -1) + 1);
    setEvents(list);
  }, [initialEvents.data, initialEvents.error]);
  const refresh = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useFeed(
    ConsoleThreadEventsDocument,
    () =>
      lastIndex.current === undefined ? null : { threadId: id, afterIndex: lastIndex.current },
    (data) => {
      const event = data.threadEvents;
      if (event.index <= (lastIndex.current ?? -1)) return;
      lastIndex.current = event.index;
      // A window of the newest entries: as many as were shown (earlier ones may have been
      // asked for), at least TIMELINE.
      setEvents((list) => [event, ...list].slice(0, Math.max(TIMELINE, list.length)));
      setLogLength(event.index + 1);
      const ids = redactedIdsOf(event);
      if (ids.length > 0) {
        const graph = view.current;
        void readRedacted(ids).then((nodes) => {
          if (view.current !== graph) return; // another thread is open by now
          for (const n of nodes) redactions.current.set(n.id, n);
          showRedactions();
        });
      }
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

  /** The nodes a nodes_redacted entry names, read again (their payloads now tombstones). */
  const readRedacted = async (ids: readonly string[]) => {
    const nodes: GraphNode[] = [];
    for (let k = 0; k < ids.length; k += PARALLEL) {
      const reads = await Promise.all(
        ids
          .slice(k, k + PARALLEL)
          .map((nodeId) =>
            client
              .query(
                ConsoleRedactedNodeDocument,
                { threadId: id, id: nodeId },
                { requestPolicy: 'network-only' },
              )
              .toPromise(),
          ),
      );
      for (const r of reads) if (r.data?.causalNode) nodes.push(r.data.causalNode);
    }
    return nodes;
  };

  // Time travel: the state as of atIndex (null: now, live).
  // Past the cache (queryUncached says why); the graph itself does not wait for it.
  const [past, setPast] = useState<{ atIndex: number; state?: PastState; error?: string } | null>(
    null,
  );
  useEffect(() => {
    if (atIndex === null) return;
    let current = true;
    void queryUncached(ConsoleStateAtDocument, { id, atIndex })
      .then(({ data, error }) => {
        if (!current) return;
        setPast({ atIndex, state: data?.thread?.state as PastState | undefined, error });
      })
      .catch((e: unknown) => {
        if (current) setPast({ atIndex, error: String(e) });
      });
    return () => {
      current = false;
    };
  }, [id, atIndex]);
  // Only the state of the index shown: while the next one loads, the last one's would be wrong.
  const pastState = atIndex !== null && past?.atIndex === atIndex ? past.state : undefined;
  const [shownIndex, setShownIndex] = useState<number | null>(null);
  useEffect(() => {
    const graph = view.current;
    if (graph === undefined || graphState !== 'ready') return;
    if (atIndex === null) {
      graph.showOnly(null);
      graph.setFrontier(frontier.map((f) => f.id));
      setShownIndex(null);
      return;
    }
    // The nodes as of an index are those written before it, which the page knows: the graph
    // moves at once, and the frontier (with memory and resources) follows from state(atIndex).
    const shown = graph.showBefore(atIndex)!;
    // A node appended after this index does not exist here: its details would describe a
    // future the page claims not to show.
    setSelected((id) => (id !== null && !shown(id) ? null : id));
    setShownIndex(atIndex);
  }, [atIndex, graphState]);
  useEffect(() => {
    if (atIndex !== null && pastState !== undefined) {
      view.current?.setFrontier(pastState.frontier);
    }
  }, [atIndex, pastState]);

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
        {scopes.write && atIndex === null && <DeleteThread threadId={id} />}
        {travelling && past?.atIndex === atIndex && past.error && (
          <p class="error" role="alert">
            The graph shows log index {atIndex}; its frontier, memory and resources cannot be shown:{' '}
            {past.error}
          </p>
        )}
      </div>
      <div class={hasConversation ? 'thread-grid with-conversation' : 'thread-grid'}>
        <Conversation
          threadId={id}
          selected={selected}
          onSelect={setSelected}
          onPresence={setHasConversation}
          redacted={redactedById}
        />
        <section class="panel graph-panel" aria-label="Causal graph">
          <h2>Causal graph</h2>
          <GraphControls view={view} selected={selected} ready={graphState === 'ready'} />
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
          {t && frontierCount > 0 && (
            <p>
              Frontier:{' '}
              {frontier.slice(0, FRONTIER_CHIPS).map((f) => (
                <button
                  key={f.id}
                  type="button"
                  class="chip"
                  data-frontier-id={f.id}
                  title={f.id}
                  onClick={() => setSelected(f.id)}
                >
                  {label({ ...f, redaction: f.redaction ?? redactedById.get(f.id) })}
                </button>
              ))}
              {frontierCount > FRONTIER_CHIPS && (
                <span data-frontier-more={frontierCount - FRONTIER_CHIPS}>
                  {' '}
                  and {(frontierCount - FRONTIER_CHIPS).toLocaleString()} more (
                  {frontierCount.toLocaleString()} heads in all)
                </span>
              )}
            </p>
          )}
          {redacted.length > 0 && (
            <p>
              Redacted:{' '}
              {redacted.map(([nodeId, r]) => (
                <button
                  key={nodeId}
                  type="button"
                  class="chip"
                  data-redacted-node-id={nodeId}
                  title={`${r.reason} (${r.redactedAt})`}
                  onClick={() => setSelected(nodeId)}
                >
                  {nodeId.slice(0, 12)}
                </button>
              ))}
            </p>
          )}
        </section>
        <NodeDetails threadId={id} nodeId={selected} onSelect={setSelected} />
      </div>
      <div class="thread-grid">
        <Section title="Timeline">
          <label>
            Show{' '}
            <select
              value={eventType}
              data-filter="event-type"
              onChange={(e) => setEventType(e.currentTarget.value)}
            >
              <option value="">every kind of entry</option>
              {[...new Set(events.map((e) => e.type))].sort().map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </label>
          <ul class="timeline" aria-live="polite" aria-relevant="additions">
            {events
              .filter((e) => eventType === '' || e.type === eventType)
              .map((e) => (
                <TimelineEntry
                  key={e.index}
                  threadId={id}
                  event={e}
                  later={atIndex !== null && e.index >= atIndex}
                  length={length}
                  redacted={redactedById}
                  travel={setAtIndex}
                  select={setSelected}
                />
              ))}
          </ul>
          <ShowEarlier
            threadId={id}
            oldest={events.at(-1)?.index}
            onLoaded={(earlier) =>
              setEvents((list) => {
                const oldest = list.at(-1)?.index ?? Number.POSITIVE_INFINITY;
                return [...list, ...earlier.filter((e) => e.index < oldest).reverse()];
              })
            }
          />
        </Section>
        <MemoryPanel
          memory={t?.memory ?? []}
          resources={t?.resources ?? []}
          past={pastState}
          atIndex={shownIndex}
          edit={
            scopes.write
              ? { threadId: id, onChanged: () => refetchThread({ requestPolicy: 'network-only' }) }
              : undefined
          }
        />
      </div>
      <div class="thread-grid">
        <Section title={atIndex === null ? 'Runs' : `Runs as of index ${atIndex}`}>
          {scopes.write && atIndex === null && <StartRun threadId={id} />}
          <RunsTable threadId={id} atIndex={atIndex} />
        </Section>
        <VerifyPanel id={id} />
      </div>
    </div>
  );
}

/**
 * An entry as the timeline holds it: listed ones come without their body (an entry of an import
 * holds thousands of nodes, and a list of them was most of what opening a large thread waited
 * for); live ones come with it.
 */
type TimelineEvent = ConsoleEventHeadFragment & { entry?: unknown };

/** The body of an entry listed without it: read when it is opened. */
function useEntry(
  threadId: string,
  event: TimelineEvent,
  wanted: boolean,
): { entry?: unknown; error?: string } {
  const [loaded, setLoaded] = useState<{ entry?: unknown; error?: string }>({});
  const missing = event.entry === undefined;
  useEffect(() => {
    if (!wanted || !missing || loaded.entry !== undefined) return;
    let current = true;
    // Not through the cache: shown once, here, and possibly large.
    void queryUncached(ConsoleEventEntryDocument, { id: threadId, afterIndex: event.index - 1 })
      .then(({ data, error }) => {
        if (!current) return;
        const node = data?.thread?.events.edges[0]?.node;
        setLoaded(
          node?.index === event.index
            ? { entry: node.entry }
            : { error: error ?? `entry #${event.index} is not there any more` },
        );
      })
      .catch((e: unknown) => {
        if (current) setLoaded({ error: String(e) });
      });
    return () => {
      current = false;
    };
  }, [threadId, event.index, wanted, missing, loaded.entry]);
  return missing ? loaded : { entry: event.entry };
}

/**
 * One timeline entry. Its body (the event as JSON, the nodes it wrote) is read and made only
 * while it is open: an entry of a thousand nodes is a large text, and two hundred of them made
 * again on every render of the thread (a node selected, a slider step) held the page for most of
 * a second. A redaction's body is read at once: its summary says how many nodes and why. The
 * same entry with the same props is not rendered again at all.
 */
const TimelineEntry = memo(function TimelineEntry({
  threadId,
  event: e,
  later,
  length,
  redacted,
  travel,
  select,
}: {
  threadId: string;
  event: TimelineEvent;
  later: boolean;
  length: number;
  redacted: RedactedById;
  travel: (index: number | null) => void;
  select: (id: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const body = useEntry(threadId, e, open || e.type === 'nodes_redacted');
  return (
    <li data-event-index={e.index} class={later ? 'later' : undefined}>
      <details onToggle={(event) => setOpen(event.currentTarget.open)}>
        <summary>
          <span class="index">#{e.index}</span> <span class="type">{e.type}</span>
          {body.entry !== undefined && <EventSummary event={{ type: e.type, entry: body.entry }} />}{' '}
          <When iso={e.recordedAt} />
        </summary>
        {open && (
          <>
            <button
              type="button"
              class="link"
              onClick={() => travel(e.index + 1 >= length ? null : e.index + 1)}
            >
              Show the thread as of this entry
            </button>
            {body.entry !== undefined ? (
              <>
                <EntryNodes entry={body.entry} onSelect={select} />
                <EventBody entry={body.entry} redacted={redacted} />
              </>
            ) : (
              <p role="status" class={body.error ? 'error' : undefined}>
                {body.error ?? 'Loading the entry…'}
              </p>
            )}
          </>
        )}
      </details>
    </li>
  );
});

/** Loads the TIMELINE entries before the oldest shown (the timeline pages back to entry 0). */
function ShowEarlier({
  threadId,
  oldest,
  onLoaded,
}: {
  threadId: string;
  oldest: number | undefined;
  onLoaded: (earlier: TimelineEvent[]) => void;
}) {
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  if (oldest === undefined || oldest <= 0) return null;
  const from = Math.max(0, oldest - TIMELINE);
  const load = async () => {
    setLoading(true);
    // Not through the cache: these entries are shown once, where they are asked for.
    const result = await queryUncached(ConsoleEarlierEventsDocument, {
      id: threadId,
      afterIndex: from - 1,
      first: oldest - from,
    });
    setLoading(false);
    setError(result.error);
    const edges = result.data?.thread?.events.edges;
    if (edges !== undefined) onLoaded(edges.map((e) => e.node));
  };
  return (
    <p class="more">
      <button type="button" data-more="events" disabled={loading} onClick={() => void load()}>
        {loading ? 'Loading…' : `Show entries #${from}–#${oldest - 1}`}
      </button>
      {error && <span class="error"> {error}</span>}
    </p>
  );
}

function GraphControls({
  view,
  selected,
  ready,
}: {
  view: { current: CausalGraphView | undefined };
  selected: string | null;
  ready: boolean;
}) {
  const graph = ready ? view.current : undefined;
  const step = selected === null ? undefined : graph?.collapsedStepOf(selected);
  return (
    <div class="graph-controls">
      {graph?.grouped && (
        <span class="graph-steps" data-graph-grouped="true">
          {graph.size.toLocaleString()} nodes, one per step until expanded (click a step)
          {step?.expandable && (
            <button
              type="button"
              data-expand-step={step.logIndex}
              onClick={() => graph.expandStep(selected!)}
            >
              Expand step #{step.logIndex} ({step.count.toLocaleString()} nodes)
            </button>
          )}
          <button type="button" onClick={() => graph.collapseSteps()}>
            Collapse steps
          </button>
        </span>
      )}
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
      <li>
        <span class="swatch redacted" /> redacted (payload withheld)
      </li>
    </ul>
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

/** Most nodes of one entry offered as links to the graph (an import can write thousands). */
const ENTRY_NODE_LINKS = 20;

/** The nodes an entry wrote, each a link that selects it in the graph and its details. */
function EntryNodes({ entry, onSelect }: { entry: unknown; onSelect: (id: string) => void }) {
  const nodes = (entry as { event?: { nodes?: unknown } } | null)?.event?.nodes;
  if (!Array.isArray(nodes) || nodes.length === 0) return null;
  const listed = (nodes as Array<{ id?: unknown; kind?: unknown }>)
    .filter(
      (n): n is { id: string; kind: string } =>
        typeof n?.id === 'string' && typeof n.kind === 'string',
    )
    .slice(0, ENTRY_NODE_LINKS);
  return (
    <p class="entry-nodes">
      Nodes written:{' '}
      {listed.map((n) => (
        <button
          type="button"
          class="link"
          key={n.id}
          data-select-node={n.id}
          onClick={() => onSelect(n.id)}
        >
          {label({ id: n.id, kind: n.kind, preview: null })}
        </button>
      ))}
      {nodes.length > listed.length && ` and ${nodes.length - listed.length} more`}
    </p>
  );
}
