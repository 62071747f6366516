/**
 * The protobuf encoding of OTLP/HTTP traces, decoded and encoded by protobufjs from the message
 * definitions of opentelemetry-proto v1.7 (`collector/trace/v1/trace_service.proto`,
 * `trace/v1/trace.proto`, `common/v1/common.proto`, `resource/v1/resource.proto`) and
 * `google/rpc/status.proto`, written here as protobufjs's JSON descriptor: field names, numbers
 * and types exactly as in those files. Fields Weft does not read (events, links, entity refs)
 * are declared anyway so that unknown-field skipping is never relied on for them.
 */
import protobuf from 'protobufjs';

const KV = { rule: 'repeated', type: 'KeyValue' } as const;

const DESCRIPTOR = {
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: {
            value: {
              oneof: [
                'stringValue',
                'boolValue',
                'intValue',
                'doubleValue',
                'arrayValue',
                'kvlistValue',
                'bytesValue',
              ],
            },
          },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { ...KV, id: 1 } } },
        KeyValue: {
          fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } },
        },
        InstrumentationScope: {
          fields: {
            name: { type: 'string', id: 1 },
            version: { type: 'string', id: 2 },
            attributes: { ...KV, id: 3 },
            droppedAttributesCount: { type: 'uint32', id: 4 },
          },
        },
        Resource: {
          fields: {
            attributes: { ...KV, id: 1 },
            droppedAttributesCount: { type: 'uint32', id: 2 },
          },
        },
        ResourceSpans: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        ScopeSpans: {
          fields: {
            scope: { type: 'InstrumentationScope', id: 1 },
            spans: { rule: 'repeated', type: 'Span', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            traceState: { type: 'string', id: 3 },
            parentSpanId: { type: 'bytes', id: 4 },
            flags: { type: 'fixed32', id: 16 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: { ...KV, id: 9 },
            droppedAttributesCount: { type: 'uint32', id: 10 },
            events: { rule: 'repeated', type: 'SpanEvent', id: 11 },
            droppedEventsCount: { type: 'uint32', id: 12 },
            links: { rule: 'repeated', type: 'SpanLink', id: 13 },
            droppedLinksCount: { type: 'uint32', id: 14 },
            status: { type: 'Status', id: 15 },
          },
        },
        SpanEvent: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            name: { type: 'string', id: 2 },
            attributes: { ...KV, id: 3 },
            droppedAttributesCount: { type: 'uint32', id: 4 },
          },
        },
        SpanLink: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            traceState: { type: 'string', id: 3 },
            attributes: { ...KV, id: 4 },
            droppedAttributesCount: { type: 'uint32', id: 5 },
            flags: { type: 'fixed32', id: 6 },
          },
        },
        Status: {
          fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } },
        },
        ExportTraceServiceRequest: {
          fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } },
        },
        ExportTracePartialSuccess: {
          fields: {
            rejectedSpans: { type: 'int64', id: 1 },
            errorMessage: { type: 'string', id: 2 },
          },
        },
        ExportTraceServiceResponse: {
          fields: { partialSuccess: { type: 'ExportTracePartialSuccess', id: 1 } },
        },
        RpcAny: {
          fields: { typeUrl: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } },
        },
        RpcStatus: {
          fields: {
            code: { type: 'int32', id: 1 },
            message: { type: 'string', id: 2 },
            details: { rule: 'repeated', type: 'RpcAny', id: 3 },
          },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(DESCRIPTOR);
const Request = root.lookupType('otlp.ExportTraceServiceRequest');
const Response = root.lookupType('otlp.ExportTraceServiceResponse');
const RpcStatus = root.lookupType('otlp.RpcStatus');

/**
 * Decodes a protobuf `ExportTraceServiceRequest` into the plain object request.ts reads: ids as
 * base64, 64-bit numbers as decimal text. Throws protobufjs's error on malformed bytes.
 */
export function decodeTraceRequest(bytes: Uint8Array): unknown {
  const message = Request.decode(bytes);
  return Request.toObject(message, { longs: String, bytes: String, defaults: false });
}

export function encodeTraceResponse(response: {
  partialSuccess?: { rejectedSpans: number; errorMessage: string };
}): Uint8Array {
  return Response.encode(Response.fromObject(response)).finish();
}

export function encodeStatus(status: { code: number; message: string }): Uint8Array {
  return RpcStatus.encode(RpcStatus.fromObject(status)).finish();
}

/** A decoded response or status (tests read the answers back with these). */
export const decodeTraceResponse = (bytes: Uint8Array): unknown =>
  Response.toObject(Response.decode(bytes), { longs: Number });
export const decodeStatus = (bytes: Uint8Array): unknown =>
  RpcStatus.toObject(RpcStatus.decode(bytes));
