/**
 * How the console shows a redaction: a node whose payload was withheld (redactNodes) reads as
 * "redacted" with its reason and time, never as its tombstone; a `nodes_redacted` log entry reads
 * as what it did.
 */
import { Json, When } from './common';

/** The tombstone's key (src/core/graph/tombstone.ts): a client may not write it, so it is a redaction. */
const TOMBSTONE_KEY = 'weft:redacted';

export interface RedactionNote {
  reason: string;
  redactedAt: string;
}

/**
 * The redaction a payload records, or undefined for a payload as written. Payloads in memory
 * versions and in a past state come without the node's `redaction` field, so they are read here.
 */
export function redactionOf(payload: unknown): RedactionNote | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const keys = Object.keys(payload);
  if (keys.length !== 1 || keys[0] !== TOMBSTONE_KEY) return undefined;
  const note = (payload as Record<string, unknown>)[TOMBSTONE_KEY] as Record<string, unknown>;
  if (typeof note?.reason !== 'string' || typeof note.redactedAt !== 'string') return undefined;
  return { reason: note.reason, redactedAt: note.redactedAt };
}

/** The "redacted" badge with why and when, in place of a payload. */
export function Redacted({ redaction }: { redaction: RedactionNote }) {
  return (
    <p class="redacted" data-redacted="true">
      <span class="badge redacted">redacted</span> {redaction.reason}{' '}
      <span class="when">
        (withheld at <When iso={redaction.redactedAt} />)
      </span>
    </p>
  );
}

/** A payload: as JSON, or the redaction badge when it is a tombstone. */
export function Payload({ value, inline }: { value: unknown; inline?: boolean }) {
  const redaction = redactionOf(value);
  if (redaction) return <Redacted redaction={redaction} />;
  return inline ? <code>{JSON.stringify(value)}</code> : <Json value={value} />;
}

/** The node ids a `nodes_redacted` entry names, or [] for any other entry. */
export function redactedIdsOf(event: { type: string; entry: unknown }): string[] {
  if (event.type !== 'nodes_redacted') return [];
  const nodes = (event.entry as { event?: { nodes?: Array<{ id?: unknown }> } })?.event?.nodes;
  return (nodes ?? []).map((n) => n.id).filter((id): id is string => typeof id === 'string');
}

/** What a timeline shows of an entry after its type: for a redaction, how many and why. */
export function EventSummary({ event }: { event: { type: string; entry: unknown } }) {
  if (event.type !== 'nodes_redacted') return null;
  const count = redactedIdsOf(event).length;
  const reason = (event.entry as { event?: { reason?: unknown } })?.event?.reason;
  return (
    <span class="redacted">
      {' '}
      <span class="badge redacted">
        {count} node{count === 1 ? '' : 's'} redacted
      </span>
      {typeof reason === 'string' ? `: ${reason}` : ''}
    </span>
  );
}

/** The nodes redacted since the page loaded, by id: entries loaded before still hold their payloads. */
export type RedactedById = ReadonlyMap<string, RedactionNote>;

/**
 * `value` with every tombstone inside it, and the payload of every node in `redacted`, replaced
 * by a note saying it was redacted, and why.
 */
function withRedactionsNoted(value: unknown, redacted: RedactedById, depth = 0): unknown {
  const redaction = redactionOf(value);
  if (redaction) return `(redacted: ${redaction.reason})`;
  if (typeof value !== 'object' || value === null || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => withRedactionsNoted(v, redacted, depth + 1));
  const id = (value as { id?: unknown }).id;
  const later = typeof id === 'string' ? redacted.get(id) : undefined;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      later && k === 'payload'
        ? `(redacted: ${later.reason})`
        : withRedactionsNoted(v, redacted, depth + 1),
    ]),
  );
}

/** A log entry's event as JSON, its redacted payloads shown as redactions, never as payloads. */
export function EventBody({ entry, redacted }: { entry: unknown; redacted: RedactedById }) {
  const event = (entry as { event?: unknown } | null)?.event ?? entry;
  return <Json value={withRedactionsNoted(event, redacted)} />;
}
