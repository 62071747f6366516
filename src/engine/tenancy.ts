/**
 * Tenant scoping in the engine. A command or read made for a tenant sees only that
 * tenant's threads: another tenant's thread is NOT_FOUND with the very answer a thread that does
 * not exist gets, so nothing tells the two apart. New threads (create, import, fork) belong to the
 * caller's tenant. `undefined` is the system caller (CLI, scheduler, embedding): every tenant.
 *
 * Thread ids are per tenant: two tenants may each have a thread `t1`. The store keeps one
 * global key per thread, so the engine maps `(tenant, id)` to a storage key at its boundary:
 *
 * - a thread of the default tenant is stored under its id, as every thread was before ids were
 *   per tenant (open mode and existing data are unchanged);
 * - a new thread of another tenant is stored under `<id>` U+001F `<tenant>` (a thread id may
 *   not contain C0 control characters, so no id is ever read as such a key); the default tenant
 *   uses that form too for an id whose plain key another tenant already holds;
 * - a thread a tenant created before that keeps its plain key, and is found under it.
 *
 * The log is not touched: a thread's entries name it by its id (`thread_created`,
 * `thread_forked`), never by its key, so state hashes do not depend on where a thread is stored,
 * and an exported log imports into any tenant. Tenant callers name threads by id and see ids
 * in every answer; the system caller names threads by storage key (the same as the id for
 * threads of the default tenant) and sees keys.
 */
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { textProblem } from '../core/text.js';
import { createCache, createInvalidations, type Invalidations } from '../store/cache.js';
import { DEFAULT_TENANT, type ThreadStore } from '../store/read-model/index.js';
import { invalid, threadNotFound } from './checks.js';

export { DEFAULT_TENANT };

/** Between a thread id and its tenant in a storage key; no thread id contains it. */
export const KEY_SEPARATOR = '\u001f';

/** Threads whose tenant a directory remembers by default (a thread's tenant never changes). */
const MAX_CACHED = 100_000;

/**
 * Which tenant owns each thread, asked of the store and remembered: a thread's tenant never
 * changes, so a remembered answer stays true. Each engine opens one (`engine.tenants`) and every
 * tenant lookup of that engine — commands, reads, the hub's tenant filter — goes through it.
 */
export interface ThreadTenants {
  /** The owner of the thread stored under `key` if this directory knows it, without asking. */
  known(key: string): string | undefined;
  /** Asks the store for the owner of `key` (even when known) and remembers a found one. */
  ask(key: string): Promise<string | undefined>;
  /** Remembers the owner of a thread this engine just created (no need to ask for it later). */
  remember(key: string, tenant: string): void;
  /** Forgets a thread (it was deleted). */
  forget(key: string): void;
}

/**
 * A tenant directory over `store`, remembering up to `capacity` threads (least recently used
 * forgotten), each under its deletion epoch (`invalidations`) taken before the store is asked:
 * the owner of a deleted thread is never answered for one made again under its key.
 */
export function createThreadTenants(
  store: Pick<ThreadStore, 'getThreadTenant'>,
  invalidations: Invalidations = createInvalidations(),
  capacity = MAX_CACHED,
): ThreadTenants {
  const owners = createCache<string>({ maxEntries: capacity });
  return {
    known: (key) => owners.get(invalidations.keyOf(key)),
    async ask(key) {
      const slot = invalidations.keyOf(key);
      const tenant = await store.getThreadTenant(key);
      if (tenant !== undefined) owners.set(slot, tenant);
      return tenant;
    },
    remember: (key, tenant) => {
      owners.set(invalidations.keyOf(key), tenant);
    },
    forget: (key) => {
      owners.delete(invalidations.keyOf(key));
    },
  };
}

/** The tenant owning the thread stored under `key` (remembered once known); undefined for none. */
export async function threadTenant(
  tenants: ThreadTenants,
  key: string,
): Promise<string | undefined> {
  return tenants.known(key) ?? tenants.ask(key);
}

/** Whether `value` could be a stored key: not a string, or text `textProblem` accepts. */
export const isStorable = (value: unknown): boolean =>
  typeof value !== 'string' || textProblem(value) === undefined;

/**
 * Whether `tenant` (undefined: the system) may see the thread stored under `key`; false for an
 * unknown key.
 */
export async function canSee(
  tenants: ThreadTenants,
  key: string,
  tenant: string | undefined,
): Promise<boolean> {
  if (tenant === undefined) return true;
  // No stored thread has a key that is not storable text, and Postgres refuses a NUL in a lookup.
  if (!isStorable(key)) return false;
  return (await threadTenant(tenants, key)) === tenant;
}

/** The storage key of thread `threadId` of `tenant` in the tenant-qualified form. */
export const qualifiedKey = (threadId: string, tenant: string): string =>
  `${threadId}${KEY_SEPARATOR}${tenant}`;

/** The id of the thread stored under `key`, as its tenant names it. */
export function publicThreadId(key: string): string {
  const at = key.indexOf(KEY_SEPARATOR);
  return at < 0 ? key : key.slice(0, at);
}

/**
 * The storage key of `tenant`'s thread `threadId`; undefined when the tenant has no thread by
 * that id (whether or not another tenant has one). A thread of the tenant's the cache knows
 * answers at once; otherwise both places are asked of the store together, even when the cache
 * knows another tenant's thread there, so that an id another tenant uses costs what a free id
 * costs and answering does not time another tenant's threads.
 */
export async function threadKey(
  tenants: ThreadTenants,
  threadId: string,
  tenant: string,
): Promise<string | undefined> {
  return (await lookUp(tenants, threadId, tenant)).key;
}

/** threadKey, and whether the plain key is taken (by anyone) when the tenant has no thread. */
async function lookUp(
  tenants: ThreadTenants,
  threadId: string,
  tenant: string,
): Promise<{ key: string | undefined; plainTaken: boolean }> {
  if (
    typeof threadId !== 'string' ||
    threadId.includes(KEY_SEPARATOR) ||
    !isStorable(threadId) ||
    !isStorable(tenant)
  ) {
    return { key: undefined, plainTaken: true };
  }
  // The likelier place first: most of the default tenant's threads have plain keys, other
  // tenants' plain keys hold only threads from before ids were per tenant.
  const qualified = qualifiedKey(threadId, tenant);
  const places = tenant === DEFAULT_TENANT ? [threadId, qualified] : [qualified, threadId];
  const known = places.find((key) => tenants.known(key) === tenant);
  if (known !== undefined) return { key: known, plainTaken: true };
  const owners = await Promise.all(places.map((key) => tenants.ask(key)));
  return {
    key: places[owners.indexOf(tenant)],
    plainTaken: owners[places.indexOf(threadId)] !== undefined,
  };
}

/**
 * Where a new thread `threadId` of `tenant` is stored, or `taken` with the key of the tenant's
 * own thread by that id. Another tenant's thread by that id changes only the key, never the
 * answer. Two creations racing for one key are settled by the store (the thread key is unique).
 */
export async function newThreadKey(
  tenants: ThreadTenants,
  threadId: string,
  tenant: string,
): Promise<{ key: string; taken: boolean }> {
  const found = await lookUp(tenants, threadId, tenant);
  if (found.key !== undefined) return { key: found.key, taken: true };
  const qualified = qualifiedKey(threadId, tenant);
  return {
    key: tenant === DEFAULT_TENANT && !found.plainTaken ? threadId : qualified,
    taken: false,
  };
}

/** A thread as one caller names it: its storage key, and the id the caller's answers show. */
export interface Located {
  key: string;
  id: string;
}

/**
 * The thread `threadId` names for `tenant`, or the NOT_FOUND of a thread that does not exist.
 * The system caller names threads by storage key: whether one exists is left to the command.
 */
export async function locateThread(
  tenants: ThreadTenants,
  threadId: string,
  tenant: string | undefined,
  path = '$.threadId',
): Promise<Result<Located>> {
  // No stored thread has such an id, and Postgres refuses a NUL even in a lookup.
  const problem = typeof threadId === 'string' ? textProblem(threadId) : 'must be a string';
  if (problem !== undefined) return err(invalid(path, problem));
  if (tenant === undefined) return ok({ key: threadId, id: threadId });
  const key = await threadKey(tenants, threadId, tenant);
  return key === undefined ? err(threadNotFound(threadId)) : ok({ key, id: threadId });
}

/** How `tenant` names the thread stored under `key` (the system: by the key itself). */
export const shownId = (key: string, tenant: string | undefined): string =>
  tenant === undefined ? key : publicThreadId(key);

/**
 * `error` as the caller of `at` sees it: the storage key replaced by the caller's id in every
 * field and message, so no answer shows where a thread is stored.
 */
export function inCallerTerms(error: WeftError, at: Located): WeftError {
  if (at.key === at.id) return error;
  const swap = (value: unknown): unknown => {
    if (typeof value === 'string') return value.split(at.key).join(at.id);
    if (Array.isArray(value)) return value.map(swap);
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, swap(v)]));
    }
    return value;
  };
  return swap(error) as WeftError;
}

/** `result`, its error in the terms of the caller of `at` (see inCallerTerms). */
export function answeredAs<T>(result: Result<T>, at: Located): Result<T> {
  return result.ok ? result : err(inCallerTerms(result.error, at));
}

/** A thread holding a run, with its fork source and tenant (RunLocation / RunPlace). */
interface RunHolder {
  threadId: string;
  forkedFromId: string | null;
  tenantId: string;
}

/**
 * Of the threads holding a run id, the ones that started the run: a fork carries a copy of the
 * runs of the prefix it copied, so a holder whose fork source (in its own tenant, named by id)
 * also holds the run is a copy.
 */
export function runHomes<T extends RunHolder>(holders: readonly T[]): T[] {
  const named = (tenant: string, id: string) => `${tenant}${KEY_SEPARATOR}${id}`;
  const held = new Set(holders.map((h) => named(h.tenantId, publicThreadId(h.threadId))));
  return holders.filter(
    (h) => h.forkedFromId === null || !held.has(named(h.tenantId, h.forkedFromId)),
  );
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
