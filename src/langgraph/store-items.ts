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

/** Whether `items` starts with `base` (known equal below `from`). */
export function isPrefix(base: readonly string[], items: readonly string[], from = 0): boolean {
  if (base.length > items.length) return false;
  for (let i = from; i < base.length; i++) if (base[i] !== items[i]) return false;
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
): Promise<HeldList & { hashes: string[]; shared: number }> {
  // The items the base holds at the same positions were stored with it: no hash to look up.
  const shared = ItemCache.sharedPrefix(base, items);
  const hashes: string[] = new Array(items.length);
  const knowns: Array<Known | undefined> = new Array(items.length);
  for (let i = 0; i < shared; i++) {
    const known = base!.knowns![i]!;
    hashes[i] = known.hash;
    knowns[i] = known;
  }
  for (let i = shared; i < items.length; i++) {
    const item = items[i];
    let known = ItemCache.heldAt(base, i, item) ?? index.items.knownOf(item);
    if (known === undefined || !(index.values.has(known.hash) || known.hash in values)) {
      const encoded = await encode(serde, item);
      const hash = contentHash(encoded);
      if (!index.values.has(hash)) values[hash] = encoded;
      known = index.items.remember(item, hash);
      hashes[i] = hash;
    } else {
      hashes[i] = known.hash;
    }
    knowns[i] = known;
  }
  return { hashes, objects: items.slice(), knowns, shared };
}
