/** Who is calling: the caller of one operation, its tenant and the scopes of its key. */
import { DEFAULT_TENANT } from '../engine/tenancy.js';

/** What an API key may do. `admin` includes the other three. */
export const SCOPES = ['read', 'write', 'approve', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** The caller of one operation. */
export interface AuthInfo {
  /** Whether the caller is allowed in at all (open mode, or a valid key). */
  authenticated: boolean;
  /** The tenant whose threads the operation sees. */
  tenant: string;
  scopes: ReadonlySet<Scope>;
  /** The API key's id; null in open mode or when unauthenticated. */
  keyId: string | null;
  /** Why the caller is not authenticated (missing, malformed, unknown or revoked key). */
  reason?: string;
}

/** Whether the caller has `scope` (`admin` has them all). */
export function grants(ctx: { auth: AuthInfo }, scope: Scope): boolean {
  return ctx.auth.authenticated && (ctx.auth.scopes.has(scope) || ctx.auth.scopes.has('admin'));
}

/** Open mode (no API keys configured, loopback only): the default tenant with every scope. */
export const OPEN_AUTH: AuthInfo = {
  authenticated: true,
  tenant: DEFAULT_TENANT,
  scopes: new Set(SCOPES),
  keyId: null,
};

/** A caller without a valid key: no scopes, and a tenant no thread belongs to. */
export function unauthenticated(reason: string): AuthInfo {
  return {
    authenticated: false,
    tenant: '\u0000unauthenticated',
    scopes: new Set(),
    keyId: null,
    reason,
  };
}
