/**
 * Provider error recognition for the thread store (STYLE: Prisma codes are read in src/store
 * only). A unique violation is `P2002` from a model query and `P2010` from a raw one, with the
 * driver adapter's classification in `meta.driverAdapterError.cause` — the same shape on SQLite
 * and Postgres. Matched structurally, so neither generated client's error classes are needed.
 * (src/store/event-log has the same check; the two can share one module once both have landed.)
 */

const UNIQUE_DRIVER_CODES: ReadonlySet<string> = new Set([
  '23505',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_UNIQUE',
]);

const field = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

/** True for a unique-constraint violation raised through either Prisma client. */
export function isUniqueViolation(error: unknown): boolean {
  const code = field(error, 'code');
  if (code === 'P2002') return true;
  if (code !== 'P2010') return false;
  const cause = field(field(field(error, 'meta'), 'driverAdapterError'), 'cause');
  if (field(cause, 'kind') === 'UniqueConstraintViolation') return true;
  const original = field(cause, 'originalCode');
  return typeof original === 'string' && UNIQUE_DRIVER_CODES.has(original);
}
