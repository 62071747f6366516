/**
 * Panels of the thread view: memory and resources (now, or as of a log index) and strict
 * verification, redacted payloads shown as redactions.
 */
import { useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ConsoleVerifyDocument } from '../generated/graphql';
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
}: {
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
          {[...heads.entries()].map(([key, n]) => (
            <li key={key}>
              <strong>{key}</strong> <Payload value={n.payload} />
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
                {m.tainted && (
                  <span class="badge taint" data-memory-taint={`${m.type}:${m.key}`}>
                    tainted: {taintReason(m.node.taint)}
                  </span>
                )}{' '}
                ({m.history.length} version
                {m.history.length === 1 ? '' : 's'})
              </summary>
              <Payload value={m.content} />
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
