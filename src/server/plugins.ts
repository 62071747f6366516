/** Small yoga plugins, one concern each. */
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });

/** Refuses a request whose declared body is larger than `maxBytes`, before reading it (413). */
export function useBodyLimit(maxBytes: number): Plugin {
  return {
    onRequest({ request, endResponse }) {
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > maxBytes) {
        endResponse(
          json(413, {
            errors: [
              {
                message: `request body is ${length} bytes, over the limit of ${maxBytes} (WEFT_MAX_BODY_BYTES)`,
                extensions: { code: 'PAYLOAD_TOO_LARGE' },
              },
            ],
          }),
        );
      }
    },
  };
}

/** `/healthz` (the process answers) and `/readyz` (the database answers). */
export function useHealth(ready: () => Promise<void>): Plugin {
  return {
    async onRequest({ request, endResponse, url }) {
      if (request.method !== 'GET') return;
      if (url.pathname === '/healthz') {
        endResponse(json(200, { status: 'ok' }));
      } else if (url.pathname === '/readyz') {
        try {
          await ready();
          endResponse(json(200, { status: 'ready' }));
        } catch (error) {
          // The driver's message can name files and hosts: a short reason only.
          const why =
            error instanceof Error && error.message === 'shutting down'
              ? 'shutting down'
              : 'database unreachable';
          endResponse(json(503, { status: 'unavailable', reason: why }));
        }
      }
    },
  };
}

/** Refuses introspection queries (WEFT_INTROSPECTION=false). */
export function useNoIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}
