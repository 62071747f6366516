/**
 * One run (`#/run/<threadId>/<runId>`): its card (status, budget meters, spend, error, actions)
 * and its step timeline — every log entry of the run as a bar from when it happened to the next
 * (Gantt-like: waits, approvals, retries and the end coloured apart), with its duration and the
 * tokens spent so far (the budget burning). The thread's log is read newest first, in pages, back
 * to the run's start (at most MAX_PAGES pages; further back is said, not hidden). Then the nodes
 * the run wrote, oldest first (the first 100, with the count).
 */
import { useClient, useQuery } from '@urql/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ConsoleRunEventsDocument,
  ConsoleRunNodesDocument,
  ConsoleRunPageDocument,
} from '../generated/graphql';
import { label } from '../graph';
import { href } from '../router';
import { Section, When } from './common';
import { duration, type RunStep, reachesStart, runSteps } from './run-steps';
import { RunCard } from './runs';

const PAGE = 200;
const MAX_PAGES = 10;
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']);

type Entry = { index: number; type: string; recordedAt: string; entry: unknown };

export function RunView({ threadId, runId }: { threadId: string; runId: string }) {
  const client = useClient();
  const [run] = useQuery({ query: ConsoleRunPageDocument, variables: { threadId, runId } });
  const [entries, setEntries] = useState<{ list: Entry[]; complete: boolean } | string>();
  const r = run.data?.run;

  useEffect(() => {
    let cancelled = false;
    (async () => {
      const list: Entry[] = [];
      let after: string | null | undefined;
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const result = await client
          .query(
            ConsoleRunEventsDocument,
            { id: threadId, first: PAGE, ...(after ? { after } : {}) },
            { requestPolicy: 'network-only' },
          )
          .toPromise();
        if (result.error) throw result.error;
        const events = result.data?.thread?.events;
        list.push(...(events?.edges.map((e) => e.node) ?? []));
        if (reachesStart(list, runId) || !events?.pageInfo.hasNextPage) {
          return { list, complete: true };
        }
        after = events.pageInfo.endCursor;
      }
      return { list, complete: false };
    })()
      .then((read) => !cancelled && setEntries(read))
      .catch((e: unknown) => !cancelled && setEntries(String(e)));
    return () => {
      cancelled = true;
    };
  }, [client, threadId, runId, r?.updatedAt]);

  if (run.error) {
    return (
      <p class="error" role="alert">
        Cannot show run {runId} on thread {threadId}:{' '}
        {run.error.message.replace(/^\[GraphQL\] /, '')}
      </p>
    );
  }
  if (run.fetching && !r) return <p role="status">Loading the run…</p>;
  if (!r)
    return (
      <p class="error">
        No run {runId} on thread {threadId}.
      </p>
    );
  return (
    <div class="run-page">
      <h1>
        Run <code>{r.id}</code>
      </h1>
      <p>
        On thread <a href={href.thread(threadId)}>{threadId}</a>
        {r.startedAt && (
          <>
            {' '}
            · started <When iso={r.startedAt} />
          </>
        )}
      </p>
      <RunCard run={r} showThread={false} live />
      <Section title="Steps">
        {typeof entries === 'string' ? (
          <p class="error">The run's log could not be read: {entries}</p>
        ) : entries === undefined ? (
          <p role="status">Reading the run's log…</p>
        ) : (
          <Steps
            steps={runSteps(entries.list, runId, {
              live: !TERMINAL.has(r.status),
              updatedAt: r.updatedAt,
              now: Date.now(),
            })}
            complete={entries.complete}
          />
        )}
      </Section>
      <Section title="Nodes">
        <RunNodes threadId={threadId} runId={runId} updatedAt={r.updatedAt} />
      </Section>
    </div>
  );
}

/** The nodes the run wrote, oldest first: the first 100 and how many there are. */
function RunNodes({
  threadId,
  runId,
  updatedAt,
}: {
  threadId: string;
  runId: string;
  updatedAt: string;
}) {
  const [nodes, refetch] = useQuery({
    query: ConsoleRunNodesDocument,
    variables: { threadId, runId },
  });
  // The run moved on (it is live): what it wrote since shows too. Not on mount: the query
  // above has just been sent.
  const seen = useRef(updatedAt);
  useEffect(() => {
    if (seen.current === updatedAt) return;
    seen.current = updatedAt;
    refetch({ requestPolicy: 'network-only' });
  }, [updatedAt]);
  if (nodes.error)
    return <p class="error">The run's nodes could not be read: {nodes.error.message}</p>;
  const list = nodes.data?.thread?.nodes;
  if (!list) return <p role="status">Reading the run's nodes…</p>;
  if (list.totalCount === 0) return <p>This run wrote no nodes.</p>;
  return (
    <>
      <p>
        {list.totalCount > list.edges.length
          ? `The first ${list.edges.length} of ${list.totalCount} nodes it wrote.`
          : `It wrote ${list.totalCount} ${list.totalCount === 1 ? 'node' : 'nodes'}.`}
      </p>
      <ol class="run-nodes">
        {list.edges.map(({ node }) => (
          <li key={node.id} data-node-id={node.id}>
            <code>#{node.logIndex}</code> {label(node)}
          </li>
        ))}
      </ol>
    </>
  );
}

function Steps({ steps, complete }: { steps: RunStep[]; complete: boolean }) {
  if (steps.length === 0) return <p>No entries of this run were found.</p>;
  const t0 = steps[0]!.at;
  const span = Math.max(1, steps[steps.length - 1]!.until - t0);
  return (
    <>
      {!complete && (
        <p class="note">
          The run began more than {MAX_PAGES * PAGE} entries back; its earlier steps are not shown.
        </p>
      )}
      <p>
        {steps.length} steps over {duration(span)}.
      </p>
      <table class="steps">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Step</th>
            <th scope="col">When (bar: until the next step)</th>
            <th scope="col">Took</th>
            <th scope="col">Tokens so far</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((s) => (
            <tr
              key={s.index}
              class={`step step-${s.kind}`}
              data-step-index={s.index}
              data-step-kind={s.kind}
            >
              <td>{s.index}</td>
              <td>{s.label}</td>
              <td class="track">
                <span
                  class="bar"
                  style={{
                    marginLeft: `${((s.at - t0) / span) * 100}%`,
                    width: `${Math.max(0.5, ((s.until - s.at) / span) * 100)}%`,
                  }}
                />
              </td>
              <td>{duration(s.until - s.at)}</td>
              <td>{s.tokens.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
