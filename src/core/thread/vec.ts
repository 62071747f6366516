/**
 * A persistent append-only vector: a shared backing array plus the length this value sees.
 * Appending to the newest value pushes in place (O(1)); appending to an older value first
 * copies its prefix (copy-on-divergence), so every value keeps answering as it did.
 */
export interface Vec<T> {
  readonly items: T[];
  readonly length: number;
}

export const emptyVec = <T>(): Vec<T> => ({ items: [], length: 0 });

export function vecPush<T>(vec: Vec<T>, item: T): Vec<T> {
  const items = vec.items.length === vec.length ? vec.items : vec.items.slice(0, vec.length);
  items.push(item);
  return { items, length: vec.length + 1 };
}

export function vecGet<T>(vec: Vec<T>, index: number): T | undefined {
  return index >= 0 && index < vec.length ? vec.items[index] : undefined;
}
