import { err, ok, type Result, type ValidationIssue } from '../errors.js';
import type { JsonObject, JsonValue } from '../json.js';
import { childPath, findJsonUnsafe } from './json-safety.js';

/** The only envelope version this code reads and writes. */
export const LOG_SCHEMA_VERSION = 1 as const;

/** An external input recorded in the log: a past-tense `type` plus plain JSON fields. */
export type LogEvent = { type: string; [key: string]: JsonValue };

/**
 * One log entry (the @statelyai/agent envelope). `index` is 0-based and contiguous per thread;
 * `recordedAt` is RFC 3339 and supplied by the caller (the core reads no clock);
 * `verification.stateHash` is the hash of the derived state after this entry (see state-hash.ts).
 */
export type LogEntry<E extends LogEvent = LogEvent> = {
  schemaVersion: typeof LOG_SCHEMA_VERSION;
  id: string;
  index: number;
  recordedAt: string;
  machineId: string;
  machineVersion: string;
  event: E;
  causationId?: string;
  correlationId?: string;
  metadata?: JsonObject;
  verification?: { stateHash: string };
};

const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  'schemaVersion',
  'id',
  'index',
  'recordedAt',
  'machineId',
  'machineVersion',
  'event',
  'causationId',
  'correlationId',
  'metadata',
  'verification',
]);

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * True for text with the form of an RFC 3339 date-time (digits where digits go, `T`, `Z` or an
 * offset), whatever its fields' values: tells a malformed date from one out of range. Pure.
 */
export const isRfc3339Form = (value: string): boolean => RFC3339.test(value);

/**
 * True for an RFC 3339 date-time (`2026-01-01T12:00:00.123Z`, `…+02:00`), with real calendar
 * and clock ranges (no February 30th, no hour 24; second 60 allowed for leap seconds). Pure.
 */
export function isRfc3339(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = RFC3339.exec(value);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 60) return false;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  return true;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

const isNonEmptyString = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0;

/**
 * Collects every envelope problem of `raw`, plus the first place where it is not plain JSON.
 * Paths start at `root` (`$` by default; stores pass e.g. `$.entries[2]`). Pure.
 */
export function getEntryIssues(raw: unknown, root = '$'): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const add = (path: string, message: string) => issues.push({ path, message });
  if (!isPlainObject(raw)) {
    add(root, 'a log entry must be a plain JSON object');
    return issues;
  }
  const at = (key: string) => childPath(root, key);

  if (raw.schemaVersion !== LOG_SCHEMA_VERSION) {
    add(
      at('schemaVersion'),
      `schemaVersion must be ${LOG_SCHEMA_VERSION} (got ${describe(raw.schemaVersion)})`,
    );
  }
  for (const key of ['id', 'machineId', 'machineVersion'] as const) {
    if (!isNonEmptyString(raw[key])) add(at(key), `${key} must be a non-empty string`);
  }
  const index = raw.index;
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) {
    add(at('index'), `index must be an integer >= 0 (got ${describe(index)})`);
  }
  if (!isRfc3339(raw.recordedAt)) {
    add(
      at('recordedAt'),
      `recordedAt must be an RFC 3339 date-time such as 2026-01-01T00:00:00.000Z (got ${describe(raw.recordedAt)})`,
    );
  }
  const event = raw.event;
  if (!isPlainObject(event)) {
    add(at('event'), 'event must be a plain object with a string `type`');
  } else if (!isNonEmptyString(event.type)) {
    add(childPath(at('event'), 'type'), 'event.type must be a non-empty string');
  }
  for (const key of ['causationId', 'correlationId'] as const) {
    if (key in raw && !isNonEmptyString(raw[key])) {
      add(at(key), `${key} must be a non-empty string when present`);
    }
  }
  if ('metadata' in raw && !isPlainObject(raw.metadata)) {
    add(at('metadata'), 'metadata must be a plain object when present');
  }
  if ('verification' in raw) checkVerification(raw.verification, at('verification'), add);
  for (const key of Object.keys(raw)) {
    if (!ENVELOPE_KEYS.has(key)) {
      add(at(key), `unknown envelope field "${key}": put extra data in metadata`);
    }
  }

  const unsafe = findJsonUnsafe(raw, root);
  if (unsafe !== null && !issues.some((issue) => issue.path === unsafe.path)) {
    add(unsafe.path, unsafe.reason);
  }
  return issues;
}

function checkVerification(
  value: unknown,
  path: string,
  add: (path: string, message: string) => void,
): void {
  if (!isPlainObject(value)) {
    add(path, 'verification must be an object {stateHash} when present');
    return;
  }
  if (!isNonEmptyString(value.stateHash)) {
    add(childPath(path, 'stateHash'), 'verification.stateHash must be a non-empty string');
  }
  for (const key of Object.keys(value)) {
    if (key !== 'stateHash') add(childPath(path, key), `unknown verification field "${key}"`);
  }
}

/**
 * Checks that `raw` is a well-formed, plain-JSON log entry (envelope v1). Returns the same
 * object (not a copy) typed as a LogEntry, or VALIDATION_FAILED listing every envelope problem
 * and the first non-JSON value, each with its path (`$.event.payload.x`). Pure.
 */
export function validateEntry(raw: unknown, root = '$'): Result<LogEntry> {
  const issues = getEntryIssues(raw, root);
  if (issues.length === 0) return ok(raw as LogEntry);
  const first = issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return err({
    code: 'VALIDATION_FAILED',
    message: `Invalid log entry at ${first.path}: ${first.message}${more}.`,
    issues,
  });
}

function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) {
    return Object.is(value, -0) ? '-0' : String(value);
  }
  return Array.isArray(value) ? 'an array' : typeof value;
}
