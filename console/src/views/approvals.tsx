/**
 * Approvals: the inbox of pending requests across threads (the default), and the resolved and
 * expired ones with their decision and response; filtered by state and thread, newest or oldest
 * first, a page at a time, with a count per state. Live (approvalRequested and runStatusChanged
 * refetch it); approve or reject with a response, where the key has `approve`.
 */
import { useClient, useQuery } from '@urql/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  type ApprovalState,
  ConsoleApprovalRequestedDocument,
  ConsoleInboxCountsDocument,
  ConsoleInboxDocument,
  ConsoleResolveDocument,
  ConsoleRunStatusDocument,
  type OrderDirection,
} from '../generated/graphql';
import { useFeed, useScopes } from '../live';
import { href } from '../router';
import { FilterSelect, Json, ThreadPicker, When, type Within, WithinSelect } from './common';

const STATES = ['PENDING', 'RESOLVED', 'EXPIRED'] as const;
const STATE_OPTIONS: ReadonlyArray<readonly [ApprovalState | '', string]> = [
  ...STATES.map((s) => [s, s.toLowerCase()] as const),
  ['', 'any'],
];
const ORDER_OPTIONS: ReadonlyArray<readonly [OrderDirection, string]> = [
  ['DESC', 'newest first'],
  ['ASC', 'oldest first'],
];
const PAGE = 25;

export function ApprovalsView() {
  const [state, setState] = useState<ApprovalState | ''>('PENDING');
  const [thread, setThread] = useState('');
  const [direction, setDirection] = useState<OrderDirection>('DESC');
  const [within, setWithin] = useState<Within>({ label: '' });
  const threadId = thread.trim() === '' ? undefined : thread.trim();
  const requestedAfter = within.after;
  const [counts, refetchCounts] = useQuery({
    query: ConsoleInboxCountsDocument,
    variables: {
      ...(threadId === undefined ? {} : { threadId }),
      ...(requestedAfter === undefined ? {} : { requestedAfter }),
    },
  });
  // Each filter change starts again from the first page (the key remounts the list).
  const [generation, setGeneration] = useState(0);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const again = () => {
    if (pending.current !== undefined) return;
    pending.current = setTimeout(() => {
      pending.current = undefined;
      setGeneration((g) => g + 1);
    }, 50);
  };
  // Refetched from an effect, with this render's filter: `again` is the feeds' callback from the
  // first render, and a refetch called there would fetch the counts of that render's filter.
  useEffect(() => {
    if (generation > 0) refetchCounts({ requestPolicy: 'network-only' });
  }, [generation]);
  useFeed(ConsoleApprovalRequestedDocument, () => ({}), again, []);
  useFeed(ConsoleRunStatusDocument, () => ({}), again, []);
  const c = counts.data;
  return (
    <div class="view">
      <h1>Approvals</h1>
      {c && (
        <p class="counts">
          <strong data-count="inbox">{c.pending.totalCount}</strong> pending ·{' '}
          <span data-count="resolved">{c.resolved.totalCount}</span> resolved ·{' '}
          <span data-count="expired">{c.expired.totalCount}</span> expired
          {threadId !== undefined && <> in {threadId}</>}
          {within.after !== undefined && <> requested within {within.label}</>}
        </p>
      )}
      <form class="filters" aria-label="Filter approvals" onSubmit={(e) => e.preventDefault()}>
        <FilterSelect
          label="State"
          filter="approval-state"
          value={state}
          options={STATE_OPTIONS}
          onChange={setState}
        />{' '}
        <ThreadPicker label="Thread" value={thread} onInput={setThread} />{' '}
        <WithinSelect
          label="Requested within"
          filter="approval-requested-within"
          value={within}
          onChange={setWithin}
        />{' '}
        <FilterSelect
          label="Order"
          filter="approval-order"
          value={direction}
          options={ORDER_OPTIONS}
          onChange={setDirection}
        />
      </form>
      <ApprovalPage
        key={`${state}/${threadId ?? ''}/${requestedAfter ?? ''}/${direction}/${generation}`}
        state={state}
        threadId={threadId}
        requestedAfter={requestedAfter}
        direction={direction}
        first
        onChange={again}
      />
    </div>
  );
}

function ApprovalPage({
  state,
  threadId,
  requestedAfter,
  direction,
  after,
  first = false,
  onChange,
}: {
  state: ApprovalState | '';
  threadId: string | undefined;
  requestedAfter: string | undefined;
  direction: OrderDirection;
  after?: string;
  first?: boolean;
  onChange: () => void;
}) {
  const scopes = useScopes();
  const [result] = useQuery({
    query: ConsoleInboxDocument,
    variables: {
      direction,
      first: PAGE,
      ...(state === '' ? {} : { state: [state] }),
      ...(threadId === undefined ? {} : { threadId }),
      ...(requestedAfter === undefined ? {} : { requestedAfter }),
      ...(after === undefined ? {} : { after }),
    },
    requestPolicy: 'network-only',
  });
  const [more, setMore] = useState(false);
  if (result.error) return <p class="error">{result.error.message}</p>;
  const page = result.data?.approvals;
  if (page === undefined) return null;
  const items = page.edges.map((e) => e.node);
  if (first && items.length === 0) {
    return (
      <p>
        {state === 'PENDING' || state === ''
          ? `Nothing ${state === '' ? 'has asked' : 'is waiting'} for a human${threadId ? ` in ${threadId}` : ''}.`
          : `No ${state.toLowerCase()} approvals${threadId ? ` in ${threadId}` : ''}.`}
      </p>
    );
  }
  return (
    <>
      <ul class="inbox">
        {items.map((a) => (
          <li
            key={`${a.threadId}/${a.runId}/${a.requestIndex}`}
            data-approval-run={a.runId}
            data-approval-state={a.state}
          >
            <article class="approval" aria-label={`Approval for run ${a.runId}`}>
              <h2>
                Run <a href={href.run(a.threadId, a.runId)}>{a.runId}</a> in{' '}
                <a href={href.thread(a.threadId)}>{a.threadId}</a>{' '}
                <span class={`badge ${a.state.toLowerCase()}`}>{a.state.toLowerCase()}</span>
              </h2>
              <p>
                {a.run?.goal} · {a.state === 'PENDING' ? 'waiting' : 'waited'} for{' '}
                {a.waitingFor.toLowerCase().replace('_', ' ')} since <When iso={a.requestedAt} />
                {a.state === 'PENDING' && a.expiresAt && (
                  <>
                    {' '}
                    · expires <When iso={a.expiresAt} />
                  </>
                )}
              </p>
              <Json value={a.prompt} />
              {a.state === 'RESOLVED' && (
                <p data-decision={a.decision ?? ''}>
                  <strong>{a.decision ?? 'resolved'}</strong> <When iso={a.resolvedAt} />
                  {a.response !== null && a.response !== undefined && (
                    <>
                      {' '}
                      with <Json value={a.response} />
                    </>
                  )}
                </p>
              )}
              {a.state === 'EXPIRED' && (
                <p>
                  Expired <When iso={a.resolvedAt ?? a.expiresAt} /> before anyone answered.
                </p>
              )}
              {a.state === 'PENDING' && scopes.approve && (
                <Resolve runId={a.runId} threadId={a.threadId} onDone={onChange} />
              )}
            </article>
          </li>
        ))}
      </ul>
      {first && !scopes.approve && state === 'PENDING' && (
        <p>This key cannot approve (no approve scope).</p>
      )}
      {page.pageInfo.hasNextPage &&
        page.pageInfo.endCursor &&
        (more ? (
          <ApprovalPage
            state={state}
            threadId={threadId}
            requestedAfter={requestedAfter}
            direction={direction}
            after={page.pageInfo.endCursor}
            onChange={onChange}
          />
        ) : (
          <button type="button" data-more="approvals" onClick={() => setMore(true)}>
            Show more
          </button>
        ))}
    </>
  );
}

/**
 * A response as the agent should get it: JSON when it reads as a JSON object or array (a
 * structured answer, e.g. `{"approved_amount": 120}`), else the text as typed.
 */
export function structured(text: string): unknown {
  if (!text.startsWith('{') && !text.startsWith('[')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Approve or reject a waiting run, with an optional response: in the inbox and on its thread. */
export function Resolve({
  runId,
  threadId,
  onDone,
}: {
  runId: string;
  threadId: string;
  onDone: () => void;
}) {
  const client = useClient();
  const [response, setResponse] = useState('');
  const [state, setState] = useState<string | undefined>(undefined);
  const id = `response-${threadId}-${runId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  const resolve = async (decision: 'approved' | 'rejected') => {
    setState('Sending…');
    const r = await client
      .mutation(ConsoleResolveDocument, {
        runId,
        threadId,
        decision,
        ...(response.trim() === '' ? {} : { response: structured(response.trim()) }),
      })
      .toPromise();
    const out = r.data?.resolveApproval;
    if (out?.__typename === 'ResolveApprovalSuccess') {
      setState(`${decision}: run is ${out.run.status.toLowerCase()}`);
      onDone();
    } else {
      setState(r.error?.message ?? (out && 'message' in out ? out.message : 'failed'));
    }
  };
  return (
    <div class="resolve">
      <label for={id}>Response (optional)</label>
      <input
        id={id}
        type="text"
        placeholder="text or JSON"
        value={response}
        onInput={(e) => setResponse(e.currentTarget.value)}
      />
      <button type="button" data-action="approve" onClick={() => resolve('approved')}>
        Approve
      </button>
      <button type="button" data-action="reject" onClick={() => resolve('rejected')}>
        Reject
      </button>
      {state && <span role="status">{state}</span>}
    </div>
  );
}
