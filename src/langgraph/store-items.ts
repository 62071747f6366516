/**
 * Storing an array value (a `messages` channel, a task's list write) item by item: each item's
 * content hash, and the encodings of the items the thread does not hold yet. A list that grew
 * from one this process holds is checked against it position by position, so a step encodes only
 * what it adds.
 */
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { contentHash, type Encoded, encode } from './codec.js';
import { type HeldList, ItemCache, type Known } from './items.js';
import type { ThreadIndex } from './thread-index.js';

/** Whether `items` starts with the first `length` of `base` (known equal below `from`). */
export function isPrefix(
  base: readonly string[],
  length: number,
  items: readonly string[],
  from = 0,
): boolean {
  if (length > items.length) return false;
  for (let i = from; i < length; i++) if (base[i] !== items[i]) return false;
  return true;
}

/**
 * The hashes of a list's items, adding to `values` those the thread does not hold; the items
 * this process read or wrote before (and did not change since) are not encoded again. `shared`:
 * how many leading items are `base`'s own, unchanged.
 */
export async function storeItems(
  serde: SerializerProtocol,
  index: ThreadIndex,
  items: readonly unknown[],
  values: Record<string, Encoded>,
  /** The list this one grew from (its parent's version), checked position by position. */
  base?: HeldList,
  /** Check the items shared with `base` for changes, not only that they are its objects. */
  recheck = true,
): Promise<HeldList & { shared: number }> {
  // The items the base holds at the same positions were stored with it: no hash to look up.
  // They are the objects the last read checked, unless a task wrote one of them back (`recheck`)
  // or the list did not grow (an update replaced a message by itself): then each is checked.
  const trust = !recheck && base !== undefined && items.length > base.length;
  const shared = ItemCache.sharedPrefix(base, items.length, items, undefined, trust);
  let hashes: string[];
  let knowns: Array<Known | undefined>;
  let objects: unknown[];
  if (
    base?.objects !== undefined &&
    base.knowns !== undefined &&
    shared === base.length &&
    base.hashes.length === shared &&
    base.objects.length === shared &&
    base.knowns.length === shared
  ) {
    // The whole base, and its arrays end where it does: this list goes on from them.
    hashes = base.hashes as string[];
    knowns = base.knowns as Array<Known | undefined>;
    objects = base.objects as unknown[];
  } else {
    hashes = base === undefined ? [] : base.hashes.slice(0, shared);
    knowns = base?.knowns === undefined ? [] : base.knowns.slice(0, shared);
    objects = base?.objects === undefined ? [] : base.objects.slice(0, shared);
  }
  for (let i = shared; i < items.length; i++) {
    const item = items[i];
    let known = ItemCache.heldAt(base, i, item) ?? index.items.knownOf(item);
    if (known === undefined || !(index.values.has(known.hash) || known.hash in values)) {
      const encoded = await encode(serde, item);
      const hash = contentHash(encoded);
      if (!index.values.has(hash)) values[hash] = encoded;
      known = index.items.remember(item, hash);
      hashes.push(hash);
    } else {
      hashes.push(known.hash);
    }
    knowns.push(known);
    objects.push(item);
  }
  return { length: items.length, hashes, objects, knowns, shared };
}
