/**
 * The spans of one OTLP/HTTP trace export, decoded from either encoding into one plain shape:
 * ids as lowercase hex, times as decimal nanosecond strings (exact: no float rounding), attribute
 * values as JSON. Decoding refuses what it cannot read with `OtlpInputError`; nothing is written
 * before a whole request decoded.
 */
import type { JsonValue } from '../core/json.js';

/** One attribute value as JSON: OTLP `AnyValue` (bytes as base64, int64 past 2^53 as text). */
export type AttributeValue = JsonValue;

export interface OtlpSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** 16 lowercase hex digits; absent for a root span. */
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind (0 unspecified … 5 consumer). */
  kind: number;
  /** Nanoseconds since the Unix epoch, as decimal text. */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, AttributeValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  /** The attributes of the resource that emitted the span (`service.name` …). */
  resource: Record<string, AttributeValue>;
}

/** Input the receiver refuses: answered 400 with a google.rpc.Status `INVALID_ARGUMENT`. */
export class OtlpInputError extends Error {
  override name = 'OtlpInputError';
}

/** Bounds on one export request, like the GraphQL writes' (docs/opentelemetry.md). */
export interface OtlpLimits {
  /** Spans in one request. */
  maxSpans: number;
  /** Attributes on one span (and on its resource). */
  maxAttributes: number;
  /** Nesting of one attribute value (arrays and key-value lists). */
  maxAttributeDepth: number;
}

export const DEFAULT_OTLP_LIMITS: OtlpLimits = {
  maxSpans: 10_000,
  maxAttributes: 1_000,
  maxAttributeDepth: 32,
};

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const NANOS = /^[0-9]{1,20}$/;

/** Checks an id's hex form; an all-zero id is invalid in OTLP. */
export function checkId(value: string, what: 'traceId' | 'spanId', where: string): string {
  const hex = value.toLowerCase();
  const ok = (what === 'traceId' ? TRACE_ID : SPAN_ID).test(hex) && /[1-9a-f]/.test(hex);
  if (!ok) {
    const size = what === 'traceId' ? 32 : 16;
    throw new OtlpInputError(`${where}.${what} must be ${size} hex digits, not all zero`);
  }
  return hex;
}

/** A nanosecond time as exact decimal text. */
export function checkNanos(value: unknown, where: string): string {
  const text =
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
      ? String(value)
      : typeof value === 'bigint' && value >= 0n
        ? value.toString()
        : value;
  if (typeof text !== 'string' || !NANOS.test(text) || BigInt(text) > 2n ** 64n - 1n) {
    throw new OtlpInputError(`${where} must be an unsigned 64-bit count of nanoseconds`);
  }
  return text.replace(/^0+(?=\d)/, '');
}

/** A count of attributes within bounds; throws naming where otherwise. */
export function checkAttributeCount(count: number, limits: OtlpLimits, where: string): void {
  if (count > limits.maxAttributes) {
    throw new OtlpInputError(
      `${where} has ${count} attributes, more than the ${limits.maxAttributes} allowed: drop some before exporting`,
    );
  }
}

/** Counts spans as they are decoded, refusing the request past the bound. */
export function spanCounter(limits: OtlpLimits): (more: number) => void {
  let total = 0;
  return (more) => {
    total += more;
    if (total > limits.maxSpans) {
      throw new OtlpInputError(
        `the request holds more than ${limits.maxSpans} spans: export smaller batches (BatchSpanProcessor maxExportBatchSize)`,
      );
    }
  };
}
