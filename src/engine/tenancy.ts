/**
 * Tenant scoping in the engine. A command or read made for a tenant sees only that
 * tenant's threads: another tenant's thread is NOT_FOUND with the very answer a thread that does
 * not exist gets, so nothing tells the two apart. New threads (create, import, fork) belong to the
 * caller's tenant. `undefined` is the system caller (CLI, scheduler, embedding): every tenant.
 */
import { err, ok, type Result } from '../core/errors.js';
import { textProblem } from '../core/text.js';
import { DEFAULT_TENANT, type ThreadStore } from '../store/read-model/index.js';
import { invalid } from './checks.js';
import { threadNotFound } from './engine.js';

export { DEFAULT_TENANT };

/** Threads whose tenant is remembered per store (a thread's tenant never changes). */
const MAX_CACHED = 100_000;
const caches = new WeakMap<ThreadStore, Map<string, string>>();

/** The tenant owning `threadId` (cached once known); undefined for an unknown thread. */
export async function threadTenant(
  store: ThreadStore,
  threadId: string,
): Promise<string | undefined> {
  let cache = caches.get(store);
  if (cache === undefined) {
    cache = new Map();
    caches.set(store, cache);
  }
  const known = cache.get(threadId);
  if (known !== undefined) return known;
  const tenant = await store.getThreadTenant(threadId);
  if (tenant !== undefined) {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(threadId, tenant);
  }
  return tenant;
}

/** Whether `value` could be a stored key: not a string, or text `textProblem` accepts. */
export const isStorable = (value: unknown): boolean =>
  typeof value !== 'string' || textProblem(value) === undefined;

/** Whether `tenant` (undefined: the system) may see `threadId`; false for an unknown thread. */
export async function canSee(
  store: ThreadStore,
  threadId: string,
  tenant: string | undefined,
): Promise<boolean> {
  if (tenant === undefined) return true;
  // No stored thread has an id that is not storable text, and Postgres refuses a NUL in a lookup.
  if (!isStorable(threadId)) return false;
  return (await threadTenant(store, threadId)) === tenant;
}

/** ok when `tenant` may see the thread; else the NOT_FOUND of a thread that does not exist. */
export async function checkThread(
  store: ThreadStore,
  threadId: string,
  tenant: string | undefined,
): Promise<Result<void>> {
  if (typeof threadId !== 'string') return ok(undefined);
  // No stored thread has such an id, and Postgres refuses a NUL even in a lookup.
  const problem = textProblem(threadId);
  if (problem !== undefined) return err(invalid('$.threadId', problem));
  if (tenant === undefined) return ok(undefined);
  return (await canSee(store, threadId, tenant)) ? ok(undefined) : err(threadNotFound(threadId));
}

/**
 * The idempotency scope of a command for a tenant: keys of different tenants never meet (the
 * default tenant keeps the plain scope, so records from before tenancy still answer).
 */
export function tenantScope(scope: string, tenant: string | undefined): string {
  return tenant === undefined || tenant === DEFAULT_TENANT ? scope : `${scope}@${tenant}`;
}

/** The tenant a new thread gets. */
export const newThreadTenant = (tenant: string | undefined): string => tenant ?? DEFAULT_TENANT;
