/**
 * Runs: status and lifecycle, retries, the compensation stack, budget meters (tokens and USD
 * against their limits, thresholds crossed) and spend per model and per node; live from
 * runStatusChanged (the normalised cache updates each run in place).
 */
import { useQuery } from '@urql/preact';
import { useRef } from 'preact/hooks';
import {
  type ConsoleRunFragment,
  ConsoleRunStatusDocument,
  ConsoleRunsDocument,
} from '../generated/graphql';
import { useFeed } from '../live';
import { href } from '../router';
import { Meter, time } from './common';

export function RunsView() {
  return (
    <div class="view">
      <h1>Runs</h1>
      <RunsTable />
    </div>
  );
}

export function RunsTable({ threadId }: { threadId?: string }) {
  const [result, refetch] = useQuery({
    query: ConsoleRunsDocument,
    variables: { first: 20, ...(threadId === undefined ? {} : { filter: { threadId } }) },
  });
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useFeed(
    ConsoleRunStatusDocument,
    () => (threadId === undefined ? {} : { threadId }),
    () => {
      if (pending.current !== undefined) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        refetch({ requestPolicy: 'network-only' });
      }, 100);
    },
    [threadId],
  );
  if (result.error) return <p class="error">{result.error.message}</p>;
  const runs = result.data?.runs.edges.map((e) => e.node) ?? [];
  if (result.data && runs.length === 0) return <p>No runs.</p>;
  return (
    <div class="runs">
      {result.data && <p class="counts">{result.data.runs.totalCount} runs</p>}
      {runs.map((run) => (
        <RunCard key={`${run.threadId}/${run.id}`} run={run} showThread={threadId === undefined} />
      ))}
    </div>
  );
}

function RunCard({ run, showThread }: { run: ConsoleRunFragment; showThread: boolean }) {
  const stack = Array.isArray(run.compensationStack) ? run.compensationStack : [];
  return (
    <article
      class="run"
      data-run-id={run.id}
      data-run-status={run.status}
      aria-label={`Run ${run.id}`}
    >
      <h3>
        <span class={`status status-${run.status.toLowerCase()}`}>{run.status.toLowerCase()}</span>{' '}
        {run.goal} <code>{run.id}</code>
      </h3>
      <p>
        {showThread && (
          <>
            thread <a href={href.thread(run.threadId)}>{run.threadId}</a> ·{' '}
          </>
        )}
        node {run.currentNode ?? '—'} · iteration {run.iterationCount}/{run.maxIterations} · retries{' '}
        {run.retryCount}/{run.maxRetries}
        {run.waitingFor && <> · waiting for {run.waitingFor}</>} · updated {time(run.updatedAt)}
      </p>
      {run.lastError && <p class="error">Last error: {run.lastError}</p>}
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
