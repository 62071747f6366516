/**
 * Panels of the thread view: memory and resources (now, or as of a log index) and strict
 * verification, redacted payloads shown as redactions.
 */
import { useClient, useQuery } from '@urql/preact';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import {
  ConsoleForkDocument,
  ConsoleRememberDocument,
  ConsoleVerifyDocument,
} from '../generated/graphql';
import { href } from '../router';
import { Section } from './common';
import { Payload } from './redaction';

export interface PastState {
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

type MemoryTaint = {
  source: string;
  derived: boolean;
  derivedFrom: readonly string[];
  toolName?: string | null;
};

/** Why a memory value is not to be trusted, in words. */
function taintReason(taint: MemoryTaint | null | undefined): string {
  if (!taint) return 'written from untrusted data';
  if (taint.derived) {
    const n = taint.derivedFrom.length;
    return `derived from ${n} tainted ${n === 1 ? 'node' : 'nodes'} (${taint.derivedFrom
      .map((id) => id.slice(0, 12))
      .join(', ')})`;
  }
  return `from ${taint.source.replace(/_/g, ' ')}${taint.toolName ? ` (tool ${taint.toolName})` : ''}`;
}

export function MemoryPanel({
  memory,
  resources,
  past,
  atIndex,
  edit,
}: {
  /**
   * With a `write` key: the thread to write a new version to, and what to do after (at a past
   * index, a new version goes to a fork made there: "edit and re-run from here").
   */
  edit?: { threadId: string; onChanged: () => void } | undefined;
  memory: ReadonlyArray<{
    type: string;
    key: string;
    content: unknown;
    tainted: boolean;
    node: { taint?: MemoryTaint | null };
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
          {[...heads.entries()].map(([key, n]) => {
            const semantic = semanticOf(n);
            return (
              <li key={key}>
                <strong>{key}</strong> <Payload value={n.payload} />
                {edit && semantic && (
                  <EditAndFork
                    threadId={edit.threadId}
                    atIndex={atIndex}
                    type={semantic.type}
                    memoryKey={semantic.key}
                    content={semantic.content}
                  />
                )}
              </li>
            );
          })}
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
                {m.tainted && (
                  <span class="badge taint" data-memory-taint={`${m.type}:${m.key}`}>
                    tainted: {taintReason(m.node.taint)}
                  </span>
                )}{' '}
                ({m.history.length} version
                {m.history.length === 1 ? '' : 's'})
              </summary>
              <Payload value={m.content} />
              {edit && (
                <EditMemory
                  key={`${m.type}:${m.key}:${m.history.length}`}
                  threadId={edit.threadId}
                  type={m.type}
                  memoryKey={m.key}
                  content={m.content}
                  onChanged={edit.onChanged}
                />
              )}
              <ol reversed>
                {m.history.map((h) => (
                  <li key={h.id}>
                    index {h.logIndex}: <Payload value={h.payload} inline />
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

export function VerifyPanel({ id }: { id: string }) {
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
      {report && report.redactedNodes.length > 0 && (
        <>
          <h3>Redacted nodes</h3>
          <p>Checked against the digest each redaction recorded, all but the withheld payload.</p>
          <ul class="verify-redacted">
            {report.redactedNodes.map((r) => (
              <li key={r.nodeId} data-verify-redacted={r.nodeId}>
                <span class="badge redacted">redacted</span> <code>{r.nodeId}</code> (created at
                index {r.index}
                {r.recorded ? '' : '; its redaction is recorded in the source thread, not here'})
              </li>
            ))}
          </ul>
        </>
      )}
    </Section>
  );
}

/** The type, key and content of a memory node (payload `{type, key, content}`), if it is one. */
function semanticOf(n: PastState['nodes'][number]) {
  const p = n.payload as { type?: unknown; key?: unknown; content?: unknown } | null;
  if (n.kind !== 'semantic' || p === null || typeof p !== 'object') return undefined;
  if (typeof p.type !== 'string' || typeof p.key !== 'string') return undefined;
  return { type: p.type, key: p.key, content: p.content };
}

/**
 * Edit and re-run from here: a fork of the thread as of `atIndex`, with a new version of this
 * memory value written to it; the fork opens (agents resume it from there). The thread itself is
 * not touched.
 */
function EditAndFork({
  threadId,
  atIndex,
  type,
  memoryKey,
  content,
}: {
  threadId: string;
  atIndex: number;
  type: string;
  memoryKey: string;
  content: unknown;
}) {
  const client = useClient();
  const [text, setText] = useState(() => JSON.stringify(content, null, 2));
  const [status, setStatus] = useState<ComponentChildren>(null);
  const id = `fork-edit-${type}-${memoryKey}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    <details class="edit-memory">
      <summary>Edit and fork from here</summary>
      <form
        data-action="edit-and-fork"
        onSubmit={async (e) => {
          e.preventDefault();
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch {
            return setStatus(
              'Not JSON: write a JSON value, e.g. "concise" or {"tone": "concise"}.',
            );
          }
          setStatus('Forking…');
          const forked = await client
            .mutation(ConsoleForkDocument, { threadId, upToIndex: atIndex })
            .toPromise();
          const fork = forked.data?.forkThread;
          if (fork?.__typename !== 'ForkThreadSuccess') {
            return setStatus(
              forked.error?.message ?? (fork && 'message' in fork ? fork.message : 'fork failed'),
            );
          }
          const written = await client
            .mutation(ConsoleRememberDocument, {
              threadId: fork.thread.id,
              type,
              key: memoryKey,
              content: value,
            })
            .toPromise();
          const out = written.data?.remember;
          if (written.error || out?.__typename !== 'RememberSuccess') {
            // The fork exists; only the new value was refused: say so, and where the fork is.
            return setStatus(
              <>
                The fork <a href={href.thread(fork.thread.id)}>{fork.thread.id}</a> was made, but
                the new value was refused:{' '}
                {written.error?.message ?? (out && 'message' in out ? out.message : 'failed')}
              </>,
            );
          }
          location.hash = href.thread(fork.thread.id);
        }}
      >
        <label for={id}>New value (JSON)</label>
        <textarea id={id} rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit">Fork at index {atIndex} with this value</button>
        {status && <span role="status"> {status}</span>}
      </form>
    </details>
  );
}

/** A new version of a memory value, written as JSON (the old versions stay in its history). */
function EditMemory({
  threadId,
  type,
  memoryKey,
  content,
  onChanged,
}: {
  threadId: string;
  type: string;
  memoryKey: string;
  content: unknown;
  onChanged: () => void;
}) {
  const client = useClient();
  const [text, setText] = useState(() => JSON.stringify(content, null, 2));
  const [status, setStatus] = useState<string | null>(null);
  const id = `edit-${type}-${memoryKey}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    <form
      class="edit-memory"
      data-action="edit-memory"
      onSubmit={async (e) => {
        e.preventDefault();
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return setStatus('Not JSON: write a JSON value, e.g. "concise" or {"tone": "concise"}.');
        }
        setStatus('Saving…');
        const r = await client
          .mutation(ConsoleRememberDocument, { threadId, type, key: memoryKey, content: value })
          .toPromise();
        const out = r.data?.remember;
        if (r.error || (out && out.__typename !== 'RememberSuccess')) {
          return setStatus(r.error?.message ?? (out && 'message' in out ? out.message : 'failed'));
        }
        setStatus('Saved as a new version.');
        onChanged();
      }}
    >
      <label for={id}>New value (JSON)</label>
      <textarea id={id} rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit">Save new version</button>
      {status && <span role="status"> {status}</span>}
    </form>
  );
}
