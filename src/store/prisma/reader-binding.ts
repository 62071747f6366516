/**
 * What the two read connections (sqlite-reader.ts, postgres-reader.ts) share: binding a
 * statement's values in their driver's form, or leaving the statement to Prisma, and closing
 * with the Prisma client they sit beside.
 */

/** A value the driver would bind differently from Prisma's adapter. */
export const NO_BIND = Symbol('no-bind');

/** `values` each in the driver's form, or undefined when one of them has none. */
export function bindAll(
  values: readonly unknown[],
  bindable: (value: unknown) => unknown,
): unknown[] | undefined {
  const bound = new Array<unknown>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = bindable(values[i]);
    if (value === NO_BIND) return undefined;
    bound[i] = value;
  }
  return bound;
}

/**
 * Runs `close` when `client` is disconnected: every owner of a store's client already
 * disconnects it, so none needs to know about the reader beside it.
 */
export function closeWithClient(
  client: { $disconnect(): Promise<void> },
  close: () => void | Promise<void>,
): void {
  const disconnect = client.$disconnect.bind(client);
  client.$disconnect = async () => {
    await close();
    await disconnect();
  };
}
