/**
 * Relay connection helpers: forward keyset pagination with opaque cursors. A cursor is
 * base64url JSON of the kind of list it belongs to and the sort key of the row it points at; a
 * malformed one, or one of another list, is BAD_USER_INPUT.
 */
import { findTextIssue } from '../core/text.js';
import { badInput } from './error-classes.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** `first` checked: default DEFAULT_PAGE_SIZE, 0 to MAX_PAGE_SIZE. */
export function pageSize(first: number | null | undefined, path = '$.first'): number {
  if (first === null || first === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE_SIZE) {
    throw badInput(path, `must be an integer from 0 to ${MAX_PAGE_SIZE} (got ${first})`);
  }
  return first;
}

/**
 * The lists cursors belong to. Sort keys of different lists can have the same shape (a runs
 * key has every member a threads key has; node sequences and log indices are both integers), so
 * a cursor names its list and a list takes only its own: another list's cursor is a position in
 * nothing, and taken as one it would page from an arbitrary place.
 */
export const CURSOR_KINDS = [
  'threads',
  'runs',
  'approvals',
  'auditEntries',
  'nodes',
  'events',
  'search',
  'activity',
  'frontier',
  'children',
] as const;
export type CursorKindName = (typeof CURSOR_KINDS)[number];

/** A list's cursors: the list's name, and the check of the sort key a cursor holds. */
export interface CursorKind<K> {
  name: CursorKindName;
  isKey: (value: unknown) => value is K;
}

export const cursorKind = <K>(
  name: CursorKindName,
  isKey: (value: unknown) => value is K,
): CursorKind<K> => ({ name, isKey });

export function encodeCursor(kind: CursorKind<unknown>, key: unknown): string {
  return Buffer.from(JSON.stringify({ k: kind.name, v: key }), 'utf8').toString('base64url');
}

/** The sort key inside `cursor`, checked by `kind`; undefined when there is no cursor. */
export function decodeCursor<T>(
  cursor: string | null | undefined,
  kind: CursorKind<T>,
  path = '$.after',
): T | undefined {
  if (cursor === null || cursor === undefined) return undefined;
  let value: { k?: unknown; v?: unknown } | undefined;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const named = typeof value === 'object' && value !== null ? value.k : undefined;
  if (typeof named === 'string' && named !== kind.name && isKindName(named)) {
    throw badInput(
      path,
      `is a cursor of ${named}, not of ${kind.name}: pass an endCursor or edge cursor of this list`,
    );
  }
  const key = named === kind.name ? value?.v : undefined;
  if (!kind.isKey(key) || !isStorableKey(key)) {
    throw badInput(
      path,
      'is not a cursor of this list: pass an endCursor or edge cursor it returned',
    );
  }
  return key;
}

const isKindName = (name: string): name is CursorKindName =>
  (CURSOR_KINDS as readonly string[]).includes(name);

/**
 * A decoded sort key the store can compare with: its strings are storable text (Postgres
 * refuses a NUL even in a comparison), its numbers are integer keys (isInt: a wider one fails
 * inside a Postgres query where SQLite finds nothing), and its `c` member, the creation time of
 * thread and run cursors, is a valid timestamp (an invalid one fails inside the query).
 */
function isStorableKey(value: unknown): boolean {
  if (findTextIssue(value) !== undefined) return false;
  const members = typeof value === 'object' && value !== null ? Object.values(value) : [value];
  if (members.some((member) => typeof member === 'number' && !isInt(member))) return false;
  const c = typeof value === 'object' && value !== null ? (value as { c?: unknown }).c : undefined;
  return c === undefined || (typeof c === 'string' && !Number.isNaN(new Date(c).getTime()));
}

export interface Connection<T> {
  edges: Array<{ cursor: string; node: T }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

/**
 * A connection from rows fetched with `take = size + 1`: the extra row only says that a next
 * page exists. `hasPreviousPage` is true when the page started after a cursor.
 */
export function toConnection<T>(
  kind: CursorKind<unknown>,
  rows: readonly T[],
  size: number,
  cursorOf: (row: T) => unknown,
  afterCursor: boolean,
): Connection<T> {
  return windowConnection(kind, rows.slice(0, size), cursorOf, {
    hasNextPage: rows.length > size,
    hasPreviousPage: afterCursor,
  });
}

/**
 * How a connection field pages: forward with `first`/`after` (the default), or backward with
 * `last`/`before` (the page ending just before the cursor, or the list's last items). Mixing the
 * two directions is BAD_USER_INPUT.
 */
export interface PageRequest<K> {
  /** The list the page is of: its cursors are of this kind. */
  kind: CursorKind<K>;
  size: number;
  backward: boolean;
  /** The cursor the page starts after, in the direction it is read (`before` when backward). */
  cursor: K | undefined;
}

export function pageRequest<K>(
  args: {
    first?: number | null | undefined;
    after?: string | null | undefined;
    last?: number | null | undefined;
    before?: string | null | undefined;
  },
  kind: CursorKind<K>,
): PageRequest<K> {
  const backward = args.last !== null && args.last !== undefined;
  if (backward && args.first !== null && args.first !== undefined) {
    throw badInput('$.last', 'cannot be given with first: page forward or backward');
  }
  if (backward && args.after !== null && args.after !== undefined) {
    throw badInput('$.after', 'cannot be given with last: use before to page backward');
  }
  if (!backward && args.before !== null && args.before !== undefined) {
    throw badInput('$.before', 'needs last: page backward with last and before');
  }
  return backward
    ? {
        kind,
        size: pageSize(args.last, '$.last'),
        backward,
        cursor: decodeCursor(args.before, kind, '$.before'),
      }
    : { kind, size: pageSize(args.first), backward, cursor: decodeCursor(args.after, kind) };
}

/**
 * The connection of rows fetched for `request` with `take = size + 1` in the direction it reads
 * (reversed order when backward): the page in the list's order, with its page info.
 */
export function pageConnection<T, K>(
  rows: readonly T[],
  request: PageRequest<K>,
  cursorOf: (row: T) => unknown,
): Connection<T> {
  if (!request.backward)
    return toConnection(request.kind, rows, request.size, cursorOf, request.cursor !== undefined);
  return windowConnection(request.kind, rows.slice(0, request.size).reverse(), cursorOf, {
    hasNextPage: request.cursor !== undefined,
    hasPreviousPage: rows.length > request.size,
  });
}

/** A connection whose `totalCount` field calls `count` (only when it is selected). */
export interface Counted {
  count?: () => Promise<number>;
}

export const withCount = <C extends object>(connection: C, count: () => Promise<number>) =>
  Object.assign(connection, { count } satisfies Counted);

/** Resolves a connection's `totalCount` (see withCount). */
export const resolveCount = (connection: unknown): Promise<number> | number =>
  (connection as Counted).count?.() ?? 0;

/**
 * The order of an ordered list page (threads, runs): its field and direction (default the
 * creation time, oldest first), the name its cursors carry, and the direction the page is read
 * in (the opposite one when paging backward). A cursor made in another order is no position in
 * this one: BAD_USER_INPUT. Cursors without an order are from the creation-time list.
 */
export function pageOrder<F extends string, K extends { o?: string | undefined }>(
  request: PageRequest<K>,
  orderBy: { field: F; direction: 'asc' | 'desc' } | null | undefined,
  defaultField: F,
): { field: F; name: string; readDescending: boolean } {
  const field = orderBy?.field ?? defaultField;
  const descending = (orderBy?.direction ?? 'asc') === 'desc';
  const name = `${field}.${descending ? 'desc' : 'asc'}`;
  if (request.cursor !== undefined && (request.cursor.o ?? `${defaultField}.asc`) !== name) {
    throw badInput(
      request.backward ? '$.before' : '$.after',
      'is a cursor of the same list in another order: page with the orderBy it came from',
    );
  }
  return { field, name, readDescending: descending !== request.backward };
}

/**
 * The window of a page over contiguous positions `[lower, length)` (a thread's log indices):
 * which positions `[from, to)` it shows, whether it shows them newest first, and its page info.
 * `request.cursor` is a position; forward pages run in the list's direction, backward pages
 * (`last`/`before`) end just before the cursor in that direction.
 */
export function positionWindow(
  request: PageRequest<number>,
  descending: boolean,
  lower: number,
  length: number,
): { from: number; to: number; reversed: boolean; hasNextPage: boolean; hasPreviousPage: boolean } {
  const { size, cursor, backward } = request;
  // Towards older positions: forward in a newest-first list, backward in an oldest-first one.
  const olderward = descending !== backward;
  if (olderward) {
    const to = Math.max(lower, Math.min(length, cursor ?? length));
    const from = Math.max(lower, to - size);
    const more = from > lower;
    return {
      from,
      to,
      reversed: descending,
      hasNextPage: descending ? more : cursor !== undefined,
      hasPreviousPage: descending ? cursor !== undefined : more,
    };
  }
  const from = Math.max(lower, cursor === undefined ? lower : cursor + 1);
  const to = Math.min(length, from + size);
  const more = to < length;
  return {
    from,
    to,
    reversed: descending,
    hasNextPage: descending ? cursor !== undefined : more,
    hasPreviousPage: descending ? more : cursor !== undefined || lower > 0,
  };
}

/** A connection of a page already in the list's order. */
export function windowConnection<T>(
  kind: CursorKind<unknown>,
  page: readonly T[],
  cursorOf: (row: T) => unknown,
  info: { hasNextPage: boolean; hasPreviousPage: boolean },
): Connection<T> {
  const cursor = (node: T) => encodeCursor(kind, cursorOf(node));
  const first = page[0];
  const last = page.at(-1);
  return {
    edges: inTurns(page, (node) => ({ cursor: cursor(node), node })),
    pageInfo: {
      ...info,
      startCursor: first === undefined ? null : cursor(first),
      endCursor: last === undefined ? null : cursor(last),
    },
  };
}

/** List items GraphQL completes in one turn of the event loop. */
export const ITEMS_PER_TURN = 50;

/**
 * A long list as items that become ready ITEMS_PER_TURN per turn of the event loop, each made by
 * `make` in its turn. GraphQL completes a list's items as they resolve, so a 1,000-node page is
 * built and executed in twenty slices with other clients' requests served in between, instead
 * of in one block they all wait behind. Short lists are made at once.
 */
export function inTurns<T, U>(items: readonly T[], make: (item: T) => U): U[] {
  if (items.length <= ITEMS_PER_TURN) return items.map(make);
  const out: Array<Promise<U>> = [];
  let turn: Promise<void> = Promise.resolve();
  for (let from = 0; from < items.length; from += ITEMS_PER_TURN) {
    turn = turn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    const ready = turn;
    for (const item of items.slice(from, from + ITEMS_PER_TURN)) {
      out.push(ready.then(() => make(item)));
    }
  }
  // GraphQL accepts a promise wherever a list item is expected.
  return out as unknown as U[];
}

/** The largest integer a sort-key column holds: a Postgres `integer` (GraphQL's Int too). */
export const MAX_KEY_INT = 2_147_483_647;

/**
 * An integer sort key: a sequence, log index, position or feed number. Rows number theirs from
 * 0 within a 32-bit column, so a negative or wider one is a position no row has.
 */
export const isInt = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_KEY_INT;
export const isString = (v: unknown): v is string => typeof v === 'string';
