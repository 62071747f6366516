/**
 * Request ids and structured logs: every HTTP request gets an id (a sane `x-request-id` from the
 * client, else a fresh UUID), echoed in the response, and one JSON line when it ends: id, method,
 * path, the operations it ran, the error codes it returned, status and duration.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { errorCodesOf } from './metrics.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What the server learns about one HTTP request while answering it. */
export interface RequestInfo {
  id: string;
  /** `name` of each executed operation, or its type when anonymous (`query`, `mutation` …). */
  operations: string[];
  errorCodes: string[];
}

const infos = new WeakMap<object, RequestInfo>();

/** The id a request gets: the client's `x-request-id` when it is short and plain, else a UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && /^[\w.:@/+=-]{1,128}$/.test(given) ? given : randomUUID();
}

export function beginRequest(req: IncomingMessage): RequestInfo {
  const info: RequestInfo = { id: requestIdOf(req), operations: [], errorCodes: [] };
  infos.set(req, info);
  return info;
}

/** The info of the node request behind a yoga server context (none for in-process `fetch`). */
export function infoOf(serverContext: unknown): RequestInfo | undefined {
  const req = (serverContext as { req?: unknown } | undefined)?.req;
  return typeof req === 'object' && req !== null ? infos.get(req) : undefined;
}

/** Records operation names and error codes on the request's info. */
export function useRequestInfo(): Plugin {
  return {
    onExecute({ args }) {
      const info = infoOf(args.contextValue);
      if (info === undefined) return;
      const op = getOperationAST(args.document, args.operationName);
      info.operations.push(op?.name?.value ?? op?.operation ?? 'unknown');
    },
    onResultProcess({ result, serverContext }) {
      infoOf(serverContext)?.errorCodes.push(...errorCodesOf(result));
    },
  };
}

export interface RequestLogLine {
  time: string;
  level: 'info' | 'warn' | 'error';
  msg: 'request';
  requestId: string;
  method: string;
  path: string;
  operations: string[];
  status: number;
  durationMs: number;
  errorCodes?: string[];
  /** The client went away before the response was complete. */
  aborted?: boolean;
}

export function requestLogLine(
  info: RequestInfo,
  fields: { method: string; path: string; status: number; durationMs: number; aborted: boolean },
): RequestLogLine {
  return {
    time: new Date().toISOString(),
    level: fields.status >= 500 ? 'error' : fields.status >= 400 ? 'warn' : 'info',
    msg: 'request',
    requestId: info.id,
    method: fields.method,
    path: fields.path,
    operations: info.operations,
    status: fields.status,
    durationMs: Math.round(fields.durationMs * 100) / 100,
    ...(info.errorCodes.length > 0 ? { errorCodes: info.errorCodes } : {}),
    ...(fields.aborted ? { aborted: true } : {}),
  };
}
