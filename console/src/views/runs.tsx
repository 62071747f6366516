/**
 * Runs: status and lifecycle, retries, the compensation stack, budget meters (tokens and USD
 * against their limits, thresholds crossed) and spend per model and per node; live from
 * runStatusChanged (the normalised cache updates each run in place), in pages; and a thread's
 * runs as of a log index (time travel, `Thread.runsAt`).
 */
import { useQuery } from '@urql/preact';
import { useRef, useState } from 'preact/hooks';
import {
  type ConsoleRunFragment,
  ConsoleRunStatusDocument,
  ConsoleRunsAtDocument,
  ConsoleRunsDocument,
} from '../generated/graphql';
import { useFeed, useScopes } from '../live';
import { href } from '../router';
import { CancelRun } from './actions';
import { Resolve } from './approvals';
import {
  FilterSelect,
  Meter,
  orderOf,
  type Sort,
  sortOptions,
  When,
  type Within,
  WithinSelect,
} from './common';

const STATUSES = [
  'PENDING',
  'SCHEDULED',
  'RUNNING',
  'WAITING',
  'RETRYING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
] as const;
type Status = (typeof STATUSES)[number];
const STATUS_OPTIONS: ReadonlyArray<readonly [Status | '', string]> = [
  ['', 'any'],
  ...STATUSES.map((s) => [s, s.toLowerCase()] as const),
];

const SORTS = sortOptions('Last change', 'Started');

export function RunsView() {
  const [status, setStatus] = useState<Status | ''>('');
  const [within, setWithin] = useState<Within>({ label: '' });
  const [sort, setSort] = useState<Sort>('UPDATED_AT DESC');
  return (
    <div class="view">
      <h1>Runs</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <FilterSelect
          label="Status"
          filter="run-status"
          value={status}
          options={STATUS_OPTIONS}
          onChange={setStatus}
        />{' '}
        <WithinSelect
          label="Changed within"
          filter="run-changed-within"
          value={within}
          onChange={setWithin}
        />{' '}
        <FilterSelect
          label="Sort by"
          filter="run-sort"
          value={sort}
          options={SORTS}
          onChange={setSort}
        />
      </form>
      <RunsPage
        key={`${status}/${within.after ?? ''}/${sort}`}
        first
        sort={sort}
        {...(status === '' ? {} : { status })}
        {...(within.after === undefined ? {} : { updatedAfter: within.after })}
      />
    </div>
  );
}

/** Runs per page: a page of runs with their breakdowns is near the schema's complexity limit. */
const PAGE = 20;

/**
 * The runs, newest change first (of one thread, or all), live; with `atIndex`, a thread's runs as
 * they were after its first `atIndex` log entries (time travel).
 */
export function RunsTable({ threadId, atIndex }: { threadId?: string; atIndex?: number | null }) {
  if (threadId !== undefined && atIndex !== undefined && atIndex !== null) {
    return <RunsAsOf threadId={threadId} atIndex={atIndex} />;
  }
  return <RunsPage threadId={threadId} first />;
}

function RunsPage({
  threadId,
  after,
  first = false,
  status,
  updatedAfter,
  sort = 'UPDATED_AT DESC',
}: {
  threadId?: string | undefined;
  after?: string;
  first?: boolean;
  status?: Status;
  updatedAfter?: string;
  sort?: Sort;
}) {
  const filter = {
    ...(threadId === undefined ? {} : { threadId }),
    ...(status === undefined ? {} : { status: [status] }),
    ...(updatedAfter === undefined ? {} : { updatedAfter }),
  };
  const [result, refetch] = useQuery({
    query: ConsoleRunsDocument,
    variables: {
      first: PAGE,
      orderBy: orderOf(sort),
      ...(after === undefined ? {} : { after }),
      ...(Object.keys(filter).length === 0 ? {} : { filter }),
    },
  });
  const [more, setMore] = useState(false);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // The first page follows status changes (a changed run moves to the top); the runs of later
  // pages update in place through the normalised cache.
  useFeed(
    ConsoleRunStatusDocument,
    () => (!first ? null : threadId === undefined ? {} : { threadId }),
    () => {
      if (pending.current !== undefined) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        refetch({ requestPolicy: 'network-only' });
      }, 100);
    },
    [threadId, first],
  );
  if (result.error) return <p class="error">{result.error.message}</p>;
  const page = result.data?.runs;
  const runs = page?.edges.map((e) => e.node) ?? [];
  if (first && page && runs.length === 0) {
    if (threadId === undefined && status === undefined && updatedAfter === undefined) {
      return (
        <p class="empty" data-empty="runs">
          <strong>No runs yet.</strong> Start one from a thread's page (<em>Start a run</em>) or
          with the <code>startRun</code> mutation; a LangGraph agent checkpointed by{' '}
          <code>WeftSaver</code> starts its own.
        </p>
      );
    }
    return (
      <p>
        {status === undefined ? 'No runs' : `No ${status.toLowerCase()} runs`}
        {updatedAfter === undefined ? '.' : ' changed in that time.'}
      </p>
    );
  }
  const list = (
    <>
      {runs.map((run) => (
        <RunCard
          key={`${run.threadId}/${run.id}`}
          run={run}
          showThread={threadId === undefined}
          live
        />
      ))}
      {page?.pageInfo.hasNextPage &&
        page.pageInfo.endCursor &&
        (more ? (
          <RunsPage
            threadId={threadId}
            after={page.pageInfo.endCursor}
            sort={sort}
            {...(status === undefined ? {} : { status })}
            {...(updatedAfter === undefined ? {} : { updatedAfter })}
          />
        ) : (
          <button type="button" onClick={() => setMore(true)}>
            Show {PAGE} more runs
          </button>
        ))}
    </>
  );
  if (!first) return list;
  return (
    <div class="runs">
      {page && (
        <p class="counts" data-run-count={page.totalCount}>
          {page.totalCount.toLocaleString()}{' '}
          {status === undefined ? '' : `${status.toLowerCase()} `}
          {page.totalCount === 1 ? 'run' : 'runs'}
        </p>
      )}
      {list}
    </div>
  );
}

function RunsAsOf({ threadId, atIndex }: { threadId: string; atIndex: number }) {
  const [result] = useQuery({
    query: ConsoleRunsAtDocument,
    variables: { id: threadId, atIndex },
  });
  if (result.error) return <p class="error">{result.error.message}</p>;
  const runs = result.data?.thread?.runsAt;
  // Until the answer for this index arrives, nothing: the runs of another index would mislead.
  if (runs === undefined || result.operation?.variables.atIndex !== atIndex) {
    return <p role="status">Loading the runs as of index {atIndex}…</p>;
  }
  return (
    <div class="runs" data-runs-at={atIndex}>
      <p class="counts">
        {runs.length} run{runs.length === 1 ? '' : 's'} as of log index {atIndex}
      </p>
      {runs.map((run) => (
        <RunCard key={`${run.threadId}/${run.id}`} run={run} showThread={false} />
      ))}
    </div>
  );
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT']);

export function RunCard({
  run,
  showThread,
  live = false,
}: {
  run: ConsoleRunFragment;
  showThread: boolean;
  /** A run as it is now (not as of a past index): it may be acted on. */
  live?: boolean;
}) {
  const scopes = useScopes();
  const stack = Array.isArray(run.compensationStack) ? run.compensationStack : [];
  const active = live && !TERMINAL.has(run.status);
  return (
    <article
      class="run"
      data-run-id={run.id}
      data-run-status={run.status}
      aria-label={`Run ${run.id}`}
    >
      <h3>
        <span class={`status status-${run.status.toLowerCase()}`}>{run.status.toLowerCase()}</span>{' '}
        {run.goal}{' '}
        <a href={href.run(run.threadId, run.id)} title="The run's steps">
          <code>{run.id}</code>
        </a>
      </h3>
      <p>
        {showThread && (
          <>
            thread <a href={href.thread(run.threadId)}>{run.threadId}</a> ·{' '}
          </>
        )}
        node {run.currentNode ?? '—'} · iteration {run.iterationCount}/{run.maxIterations} · retries{' '}
        {run.retryCount}/{run.maxRetries}
        {run.waitingFor && <> · waiting for {run.waitingFor}</>} · updated{' '}
        <When iso={run.updatedAt} />
      </p>
      {run.lastError && <p class="error">Last error: {run.lastError}</p>}
      {active &&
        run.status === 'WAITING' &&
        run.waitingFor === 'human_approval' &&
        scopes.approve && (
          <Resolve runId={run.id} threadId={run.threadId} onDone={() => undefined} />
        )}
      {active && scopes.write && <CancelRun runId={run.id} threadId={run.threadId} />}
      <Meter label="Tokens" value={run.spend.totalTokens} max={run.budget.maxTokenBudget} />
      <Meter label="USD" value={Number(run.spend.costUsd.toFixed(4))} max={run.budget.budgetUsd} />
      {run.budget.thresholdsFired.length > 0 && (
        <p>
          Thresholds crossed:{' '}
          {run.budget.thresholdsFired.map((t) => `${Math.round(t * 100)}%`).join(', ')}
        </p>
      )}
      {stack.length > 0 && (
        <details>
          <summary>Compensation stack ({stack.length})</summary>
          <ol>
            {stack.map((c, i) => (
              <li key={i}>
                <code>{JSON.stringify(c)}</code>
              </li>
            ))}
          </ol>
        </details>
      )}
      {(run.modelBreakdown.length > 0 || run.nodeBreakdown.length > 0) && (
        <details>
          <summary>Spend by model and node</summary>
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Model / node</th>
                <th scope="col">Calls</th>
                <th scope="col">Tokens</th>
                <th scope="col">USD</th>
              </tr>
            </thead>
            <tbody>
              {[
                ...run.modelBreakdown.map((b) => ['model', b] as const),
                ...run.nodeBreakdown.map((b) => ['node', b] as const),
              ].map(([what, b]) => (
                <tr key={`${what}:${b.key}`}>
                  <td>
                    {what} {b.key}
                  </td>
                  <td>{b.spend.calls}</td>
                  <td>{b.spend.totalTokens}</td>
                  <td>{b.spend.costUsd.toFixed(4)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </article>
  );
}
