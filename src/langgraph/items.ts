/**
 * The array items (messages) of one thread as this process knows them: each item decoded once,
 * and the hash of each live item object, so a step costs what it adds rather than the whole
 * conversation. The same objects go to successive reads and come back in later `put`s, which is
 * safe only while nobody changes them in place — LangGraph's contract (a node returns updates; a
 * message is replaced by one with the same id), but nothing enforces it. So every object is kept
 * with a shallow fingerprint (its own keys and their values): an object whose fields were
 * reassigned since (`message.content = …`) is not trusted — its hash is recomputed on `put`, and
 * a read decodes the stored item afresh. A change deeper inside a field (`message.tool_calls[0]
 * .args.q = …`) keeps the same field values and is not seen; docs/langgraph.md says so.
 */

interface Known {
  hash: string;
  keys: string[];
  values: unknown[];
}

/** Item hash lists kept per (channel, version): enough for the latest versions of a few channels. */
const LIST_CACHE = 64;

export class ItemCache {
  private readonly decoded = new Map<string, unknown>();
  private readonly known = new WeakMap<object, Known>();
  private readonly lists = new Map<string, readonly string[]>();

  /** The hash `item` was stored under, when it is an object this process saw and it is unchanged. */
  hashOf(item: unknown): string | undefined {
    if (typeof item !== 'object' || item === null) return undefined;
    const known = this.known.get(item);
    if (known === undefined) return undefined;
    if (unchanged(item, known)) return known.hash;
    // Changed in place: neither the old hash nor the decoded copy under it stand for it now.
    this.known.delete(item);
    if (this.decoded.get(known.hash) === item) this.decoded.delete(known.hash);
    return undefined;
  }

  /** Records that `item` (just encoded, or just decoded) is stored under `hash`. */
  remember(item: unknown, hash: string, decoded = false): void {
    if (decoded) this.decoded.set(hash, item);
    if (typeof item !== 'object' || item === null) return;
    const keys = Object.keys(item);
    this.known.set(item, {
      hash,
      keys,
      values: keys.map((k) => (item as Record<string, unknown>)[k]),
    });
  }

  /** The decoded item under `hash` when this process has it unchanged; `MISS` otherwise. */
  decodedItem(hash: string): unknown {
    if (!this.decoded.has(hash)) return MISS;
    const item = this.decoded.get(hash);
    return this.hashOf(item) === hash || typeof item !== 'object' || item === null ? item : MISS;
  }

  /** A (channel, version)'s item hashes computed before (shared: callers must not change it). */
  list(key: string): readonly string[] | undefined {
    return this.lists.get(key);
  }

  rememberList(key: string, hashes: readonly string[]): void {
    this.lists.delete(key);
    this.lists.set(key, hashes);
    if (this.lists.size > LIST_CACHE) this.lists.delete(this.lists.keys().next().value!);
  }

  clear(): void {
    this.decoded.clear();
    this.lists.clear();
  }
}

export const MISS = Symbol('not decoded');

function unchanged(item: object, known: Known): boolean {
  const record = item as Record<string, unknown>;
  let count = 0;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    if (count >= known.keys.length || known.keys[count] !== key) return false;
    if (record[key] !== known.values[count]) return false;
    count += 1;
  }
  return count === known.keys.length;
}
