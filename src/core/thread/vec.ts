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

/**
 * `vec` with `item` appended. With `same`: when `vec` is an older value whose backing array
 * already holds an item equal to `item` at that place (replaying what a newer value appended),
 * the backing array is shared instead of copied (fast-forward).
 */
export function vecPush<T>(vec: Vec<T>, item: T, same?: (held: T, item: T) => boolean): Vec<T> {
  if (
    same !== undefined &&
    vec.length < vec.items.length &&
    same(vec.items[vec.length] as T, item)
  ) {
    return { items: vec.items, length: vec.length + 1 };
  }
  const items = vec.items.length === vec.length ? vec.items : vec.items.slice(0, vec.length);
  items.push(item);
  return { items, length: vec.length + 1 };
}

export function vecGet<T>(vec: Vec<T>, index: number): T | undefined {
  return index >= 0 && index < vec.length ? vec.items[index] : undefined;
}
