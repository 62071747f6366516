/**
 * An `ExportTraceServiceRequest` as a plain object — OTLP/JSON as parsed, or the protobuf
 * encoding as protobufjs's `toObject` gives it (the same lowerCamelCase fields) — read into
 * `OtlpSpan`s. The two differ only in how ids are written: hex in JSON, base64 of the bytes from
 * protobuf. Pure; throws `OtlpInputError` naming the first problem.
 */
import type { JsonValue } from '../core/json.js';
import {
  type AttributeValue,
  checkAttributeCount,
  checkId,
  checkNanos,
  OtlpInputError,
  type OtlpLimits,
  type OtlpSpan,
  spanCounter,
} from './spans.js';

export type IdForm = 'hex' | 'base64';

type Obj = Record<string, unknown>;

const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function list(value: unknown, where: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpInputError(`${where} must be a list`);
  return value;
}

function object(value: unknown, where: string): Obj {
  if (value === undefined || value === null) return {};
  if (!isObj(value)) throw new OtlpInputError(`${where} must be an object`);
  return value;
}

function idOf(value: unknown, form: IdForm, what: 'traceId' | 'spanId', where: string): string {
  if (typeof value !== 'string') throw new OtlpInputError(`${where}.${what} is missing`);
  const hex = form === 'hex' ? value : Buffer.from(value, 'base64').toString('hex');
  return checkId(hex, what, where);
}

/** An optional parent id: absent, empty, or a span id. */
function parentIdOf(value: unknown, form: IdForm, where: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return idOf(value, form, 'spanId', `${where}.parentSpanId`);
}

/** One OTLP AnyValue as JSON. */
function anyValue(value: unknown, where: string, depth: number, limits: OtlpLimits): JsonValue {
  if (depth > limits.maxAttributeDepth) {
    throw new OtlpInputError(
      `${where} nests deeper than ${limits.maxAttributeDepth} levels: flatten the attribute`,
    );
  }
  const v = object(value, where);
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if (v.intValue !== undefined && v.intValue !== null) return intValue(v.intValue, where);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return doubleValue(v.doubleValue);
  if (typeof v.bytesValue === 'string') return v.bytesValue;
  if (v.arrayValue !== undefined) {
    const values = list(object(v.arrayValue, where).values, `${where}.arrayValue.values`);
    return values.map((item, i) => anyValue(item, `${where}[${i}]`, depth + 1, limits));
  }
  if (v.kvlistValue !== undefined) {
    const values = list(object(v.kvlistValue, where).values, `${where}.kvlistValue.values`);
    return keyValues(values, where, depth + 1, limits);
  }
  return null;
}

function intValue(value: unknown, where: string): JsonValue {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^-?[0-9]{1,20}$/.test(text)) {
    throw new OtlpInputError(`${where}.intValue must be a 64-bit integer`);
  }
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** A double as JSON: NaN and the infinities (which JSON cannot hold) as their names. */
function doubleValue(value: unknown): JsonValue {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return String(value);
  return Object.is(n, -0) ? 0 : n;
}

function keyValues(
  values: unknown[],
  where: string,
  depth: number,
  limits: OtlpLimits,
): Record<string, AttributeValue> {
  checkAttributeCount(values.length, limits, where);
  const out: Record<string, AttributeValue> = {};
  values.forEach((item, i) => {
    const kv = object(item, `${where}[${i}]`);
    if (typeof kv.key !== 'string') throw new OtlpInputError(`${where}[${i}].key is missing`);
    out[kv.key] = anyValue(kv.value, `${where}.${kv.key}`, depth, limits);
  });
  return out;
}

function spanOf(
  raw: unknown,
  where: string,
  form: IdForm,
  resource: Record<string, AttributeValue>,
  limits: OtlpLimits,
): OtlpSpan {
  const s = object(raw, where);
  const status = object(s.status, `${where}.status`);
  const span: OtlpSpan = {
    traceId: idOf(s.traceId, form, 'traceId', where),
    spanId: idOf(s.spanId, form, 'spanId', where),
    name: typeof s.name === 'string' ? s.name : '',
    kind: typeof s.kind === 'number' ? s.kind : 0,
    startTimeUnixNano: checkNanos(s.startTimeUnixNano ?? 0, `${where}.startTimeUnixNano`),
    endTimeUnixNano: checkNanos(s.endTimeUnixNano ?? 0, `${where}.endTimeUnixNano`),
    attributes: keyValues(list(s.attributes, `${where}.attributes`), where, 0, limits),
    status: {
      code: typeof status.code === 'number' ? status.code : 0,
      ...(typeof status.message === 'string' && status.message !== ''
        ? { message: status.message }
        : {}),
    },
    resource,
  };
  const parent = parentIdOf(s.parentSpanId, form, where);
  if (parent !== undefined) span.parentSpanId = parent;
  return span;
}

/** Every span of an export request, in the order given. */
export function spansOfRequest(request: unknown, form: IdForm, limits: OtlpLimits): OtlpSpan[] {
  const root = object(request, 'the request');
  const count = spanCounter(limits);
  const out: OtlpSpan[] = [];
  list(root.resourceSpans, 'resourceSpans').forEach((rs, r) => {
    const where = `resourceSpans[${r}]`;
    const resourceSpans = object(rs, where);
    const resourceObj = object(resourceSpans.resource, `${where}.resource`);
    const resource = keyValues(
      list(resourceObj.attributes, `${where}.resource.attributes`),
      `${where}.resource`,
      0,
      limits,
    );
    list(resourceSpans.scopeSpans, `${where}.scopeSpans`).forEach((ss, s) => {
      const spans = list(object(ss, `${where}.scopeSpans[${s}]`).spans, `${where}.spans`);
      count(spans.length);
      spans.forEach((raw, i) => {
        out.push(spanOf(raw, `${where}.scopeSpans[${s}].spans[${i}]`, form, resource, limits));
      });
    });
  });
  return out;
}
