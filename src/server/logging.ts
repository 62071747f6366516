/**
 * Request ids and structured logs: every HTTP request gets an id (a sane `x-request-id` from the
 * client, else a fresh UUID), echoed in the response, and one JSON line when it ends: id, method,
 * path, the operations it ran, the error codes it returned, status and duration. An unexpected
 * error — one the client only sees masked as INTERNAL_SERVER_ERROR — gets one more line, with its
 * cause and the request id (`useErrorLog`).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GraphQLError, getOperationAST } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import { typedErrorOfThrown } from '../graphql/error-classes.js';
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

export interface ErrorLogLine {
  time: string;
  level: 'error';
  msg: 'unexpected error';
  /** Absent for a request that did not come through the node server (in-process `fetch`). */
  requestId?: string;
  /** Where it happened: `parse`, `validate`, `context`, `execute` or `subscribe`. */
  phase: string;
  /** The field path, for an error raised by a resolver. */
  path?: string;
  error: { name: string; message: string; stack?: string; cause?: unknown };
}

/**
 * Whether the client sees `error` as it is: a GraphQLError raised on purpose (typed errors,
 * syntax and validation errors), not one wrapping something unexpected. This is the test yoga's
 * error masking applies, so what it masks is exactly what gets logged.
 */
function isIntended(error: unknown): boolean {
  // A typed failure a read threw (QUERY_TIMEOUT): the client gets its code, nothing is hidden.
  if (typedErrorOfThrown(error) !== undefined) return true;
  if (!(error instanceof GraphQLError)) return false;
  const original: unknown = error.originalError;
  return original === undefined || original === null || isIntended(original);
}

function describe(error: unknown): ErrorLogLine['error'] {
  if (!(error instanceof Error)) return { name: typeof error, message: String(error) };
  return {
    name: error.name,
    message: error.message,
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(error.cause === undefined ? {} : { cause: describe(error.cause) }),
  };
}

const writeLine = (line: ErrorLogLine) => process.stdout.write(`${JSON.stringify(line)}\n`);

/**
 * Logs every unexpected error of an operation once, with its cause and the request id — the
 * client gets only the masked INTERNAL_SERVER_ERROR. It must come before yoga's error masking
 * (every plugin given to yoga does), which replaces the error and drops its cause.
 */
export function useErrorLog(write: (line: ErrorLogLine) => void = writeLine): Plugin {
  const logged = new WeakSet<object>();
  const log = (error: unknown, phase: string, context: unknown) => {
    if (isIntended(error)) return;
    const cause = error instanceof GraphQLError ? error.originalError : error;
    const key = typeof cause === 'object' && cause !== null ? cause : undefined;
    if (key !== undefined && logged.has(key)) return;
    if (key !== undefined) logged.add(key);
    const requestId = infoOf(context)?.id;
    const path = error instanceof GraphQLError ? error.path?.join('.') : undefined;
    write({
      time: new Date().toISOString(),
      level: 'error',
      msg: 'unexpected error',
      ...(requestId === undefined ? {} : { requestId }),
      phase,
      ...(path === undefined || path === '' ? {} : { path }),
      error: describe(cause),
    });
  };
  const logResult =
    (phase: string, context: unknown) =>
    ({ result }: { result: { errors?: readonly unknown[] | undefined } }) => {
      for (const error of result.errors ?? []) log(error, phase, context);
    };
  /** A phase that throws (a plugin, the context factory) never reaches a result hook. */
  const guard =
    (phase: string) =>
    <T>({ context }: { context: unknown }, wrapped: () => T): T => {
      try {
        const value = wrapped();
        if (value instanceof Promise) {
          return value.catch((error: unknown) => {
            log(error, phase, context);
            throw error;
          }) as T;
        }
        return value;
      } catch (error) {
        log(error, phase, context);
        throw error;
      }
    };
  return {
    instrumentation: {
      parse: guard('parse'),
      validate: guard('validate'),
      context: guard('context'),
    },
    onExecute({ args }) {
      return {
        onExecuteDone: (payload) =>
          handleStreamOrSingleExecutionResult(payload, logResult('execute', args.contextValue)),
      };
    },
    onSubscribe({ args }) {
      return {
        onSubscribeResult: (payload) =>
          handleStreamOrSingleExecutionResult(payload, logResult('subscribe', args.contextValue)),
        onSubscribeError: ({ error }) => log(error, 'subscribe', args.contextValue),
      };
    },
  };
}
