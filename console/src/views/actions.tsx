/**
 * What a key with `write` can do from the console beyond forking: create a thread, start a run on
 * a thread, cancel a live run, redact a node, delete a thread. Destructive ones ask first (a reason to confirm a
 * redaction or cancellation, the thread's id typed out to delete it) and say what the server
 * answered, typed errors included.
 */
import { useClient } from '@urql/preact';
import { useState } from 'preact/hooks';
import {
  ConsoleCancelRunDocument,
  ConsoleCreateThreadDocument,
  ConsoleDeleteThreadDocument,
  ConsoleRedactNodeDocument,
  ConsoleStartRunDocument,
} from '../generated/graphql';
import { href } from '../router';

/** The outcome of a mutation whose result is `…Success` or an `Error`. */
function outcome(
  result: { __typename: string; message?: string } | undefined,
  error: { message: string } | undefined,
): string | null {
  if (error !== undefined) return error.message;
  if (result === undefined) return 'no answer';
  return result.__typename.endsWith('Success') ? null : (result.message ?? result.__typename);
}

/** Creates a thread (the id typed, or one the server makes) and opens it. */
export function CreateThread() {
  const client = useClient();
  const [threadId, setThreadId] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  return (
    <form
      class="inline-form"
      data-action="create-thread"
      onSubmit={async (e) => {
        e.preventDefault();
        setStatus('Creating…');
        const wanted = threadId.trim();
        const r = await client
          .mutation(ConsoleCreateThreadDocument, wanted === '' ? {} : { threadId: wanted })
          .toPromise();
        const out = r.data?.createThread;
        const failed = outcome(out as never, r.error);
        if (failed !== null) return setStatus(failed);
        if (out?.__typename !== 'CreateThreadSuccess') return setStatus('no answer');
        setThreadId('');
        setStatus(null);
        location.hash = href.thread(out.thread.id);
      }}
    >
      <label for="create-thread-id">New thread, id (empty: one is made)</label>{' '}
      <input
        id="create-thread-id"
        type="text"
        value={threadId}
        onInput={(e) => setThreadId(e.currentTarget.value)}
      />{' '}
      <button type="submit">Create thread</button>
      {status && <span role="status"> {status}</span>}
    </form>
  );
}

export function StartRun({ threadId }: { threadId: string }) {
  const client = useClient();
  const [goal, setGoal] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const id = `start-run-${threadId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    <form
      class="inline-form"
      data-action="start-run"
      onSubmit={async (e) => {
        e.preventDefault();
        if (goal.trim() === '') return setStatus('Say what the run is for.');
        setStatus('Starting…');
        const r = await client
          .mutation(ConsoleStartRunDocument, { threadId, goal: goal.trim() })
          .toPromise();
        const out = r.data?.startRun;
        const failed = outcome(out as never, r.error);
        if (failed !== null) return setStatus(failed);
        setGoal('');
        setStatus(
          out?.__typename === 'StartRunSuccess' ? `Started run ${out.run.id.slice(0, 8)}` : null,
        );
      }}
    >
      <label for={id}>Start a run with the goal</label>{' '}
      <input id={id} type="text" value={goal} onInput={(e) => setGoal(e.currentTarget.value)} />{' '}
      <button type="submit">Start run</button>
      {status && <span role="status"> {status}</span>}
    </form>
  );
}

/**
 * A destructive action behind a question: the button first asks (writing nothing), a reason is
 * typed (required when `reasonRequired`), then confirmed; the server's answer is said.
 */
function AskFirst({
  id,
  ask,
  explain,
  reasonLabel,
  reasonRequired,
  confirmLabel,
  action,
  run,
}: {
  id: string;
  ask: string;
  explain?: string;
  reasonLabel: string;
  reasonRequired: boolean;
  confirmLabel: string;
  action: string;
  run: (reason: string) => Promise<string | null>;
}) {
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  if (!asking) {
    return (
      <button type="button" data-action={action} onClick={() => setAsking(true)}>
        {ask}
      </button>
    );
  }
  return (
    <div class="confirm">
      {explain && <p>{explain}</p>}
      <label for={id}>{reasonLabel}</label>{' '}
      <input id={id} type="text" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />{' '}
      <button
        type="button"
        data-action={`confirm-${action}`}
        disabled={reasonRequired && reason.trim() === ''}
        onClick={async () => {
          setStatus('Sending…');
          setStatus((await run(reason.trim())) ?? 'Done');
        }}
      >
        {confirmLabel}
      </button>{' '}
      <button type="button" class="link" onClick={() => setAsking(false)}>
        Keep it
      </button>
      {status && <span role="status"> {status}</span>}
    </div>
  );
}

export function CancelRun({ runId, threadId }: { runId: string; threadId: string }) {
  const client = useClient();
  return (
    <AskFirst
      id={`cancel-${threadId}-${runId}`.replace(/[^A-Za-z0-9_-]/g, '_')}
      ask="Cancel run…"
      reasonLabel="Why cancel?"
      reasonRequired={false}
      confirmLabel="Cancel the run"
      action="cancel-run"
      run={async (reason) => {
        const r = await client
          .mutation(ConsoleCancelRunDocument, {
            runId,
            threadId,
            ...(reason === '' ? {} : { reason }),
          })
          .toPromise();
        return outcome(r.data?.cancelRun as never, r.error) ?? 'Cancelled';
      }}
    />
  );
}

export function RedactNode({ threadId, nodeId }: { threadId: string; nodeId: string }) {
  const client = useClient();
  return (
    <AskFirst
      id={`redact-${nodeId}`}
      ask="Redact this node…"
      explain="Redacting withholds the payload for good, here and in every fork that shares the node; the log keeps that it happened and why."
      reasonLabel="Reason (required)"
      reasonRequired
      confirmLabel="Redact"
      action="redact"
      run={async (reason) => {
        const r = await client
          .mutation(ConsoleRedactNodeDocument, { threadId, nodeId, reason })
          .toPromise();
        return outcome(r.data?.redactNodes as never, r.error) ?? 'Redacted';
      }}
    />
  );
}

export function DeleteThread({ threadId }: { threadId: string }) {
  const client = useClient();
  const [asking, setAsking] = useState(false);
  const [typed, setTyped] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  if (!asking) {
    return (
      <button type="button" data-action="delete-thread" onClick={() => setAsking(true)}>
        Delete thread…
      </button>
    );
  }
  return (
    <div class="confirm">
      <p>
        Deleting removes the thread and its history; forks keep what they share with it. Type the
        thread's id to confirm.
      </p>
      <label for="delete-confirm">Thread id</label>{' '}
      <input
        id="delete-confirm"
        type="text"
        value={typed}
        onInput={(e) => setTyped(e.currentTarget.value)}
      />{' '}
      <button
        type="button"
        data-action="confirm-delete"
        disabled={typed !== threadId}
        onClick={async () => {
          setStatus('Deleting…');
          const r = await client.mutation(ConsoleDeleteThreadDocument, { threadId }).toPromise();
          const failed = outcome(r.data?.deleteThread as never, r.error);
          if (failed !== null) return setStatus(failed);
          location.hash = href.threads();
        }}
      >
        Delete
      </button>{' '}
      <button type="button" class="link" onClick={() => setAsking(false)}>
        Keep it
      </button>
      {status && <span role="status"> {status}</span>}
    </div>
  );
}
