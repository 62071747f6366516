/**
 * The approvals inbox: every pending request across threads, live (approvalRequested and
 * runStatusChanged refetch it); approve or reject with a response, where the key has `approve`.
 */
import { useClient, useQuery } from '@urql/preact';
import { useRef, useState } from 'preact/hooks';
import {
  ConsoleApprovalRequestedDocument,
  ConsoleInboxDocument,
  ConsoleResolveDocument,
  ConsoleRunStatusDocument,
} from '../generated/graphql';
import { useFeed, useScopes } from '../live';
import { href } from '../router';
import { Json, When } from './common';

export function ApprovalsView() {
  const scopes = useScopes();
  const [result, refetch] = useQuery({ query: ConsoleInboxDocument, variables: {} });
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const again = () => {
    if (pending.current !== undefined) return;
    pending.current = setTimeout(() => {
      pending.current = undefined;
      refetch({ requestPolicy: 'network-only' });
    }, 50);
  };
  useFeed(ConsoleApprovalRequestedDocument, () => ({}), again, []);
  useFeed(ConsoleRunStatusDocument, () => ({}), again, []);
  const items = result.data?.approvals.edges.map((e) => e.node) ?? [];
  return (
    <div class="view">
      <h1>Approvals</h1>
      {result.error && <p class="error">{result.error.message}</p>}
      {result.data && (
        <p class="counts">
          <strong data-count="inbox">{result.data.approvals.totalCount}</strong> pending
          {!scopes.approve && ' · this key cannot approve (no approve scope)'}
        </p>
      )}
      {result.data && items.length === 0 && <p>Nothing is waiting for a human.</p>}
      <ul class="inbox">
        {items.map((a) => (
          <li key={`${a.threadId}/${a.runId}/${a.requestIndex}`} data-approval-run={a.runId}>
            <article class="approval" aria-label={`Approval for run ${a.runId}`}>
              <h2>
                Run <code>{a.runId}</code> in <a href={href.thread(a.threadId)}>{a.threadId}</a>
              </h2>
              <p>
                {a.run?.goal} · waiting for {a.waitingFor.toLowerCase().replace('_', ' ')} since{' '}
                <When iso={a.requestedAt} />
                {a.expiresAt && (
                  <>
                    {' '}
                    · expires <When iso={a.expiresAt} />
                  </>
                )}
              </p>
              <Json value={a.prompt} />
              {scopes.approve && <Resolve runId={a.runId} threadId={a.threadId} onDone={again} />}
            </article>
          </li>
        ))}
      </ul>
    </div>
  );
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
        ...(response.trim() === '' ? {} : { response: response.trim() }),
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
