/**
 * A persistent map for the runs of a thread: `set` returns a new map and leaves this one
 * answering exactly as before, like the rest of ThreadState. It reads as a `ReadonlyMap` (get,
 * has, size, iteration in insertion order, where replacing a value keeps the key's position),
 * so callers cannot tell it from the `new Map(runs).set(...)` copy it replaces — except that an
 * update costs O(size / CHUNK + CHUNK) instead of copying every run.
 *
 * Keys never leave a map. Their positions live in an append-only index shared by every map
 * derived from one another, as in the graph store (store.ts): a map sees the positions below
 * its `size`, adding a key from the newest map pushes onto the shared index, and adding one from
 * an older map first copies the index prefix it sees (copy-on-divergence). Values are kept in
 * chunks of CHUNK slots; `set` copies the list of chunks and the one chunk it writes.
 */
export class RunMap<V> implements ReadonlyMap<string, V> {
  private constructor(
    private readonly index: KeyIndex,
    private readonly chunks: readonly (readonly V[])[],
    readonly size: number,
  ) {}

  /** An empty map. */
  static empty<V>(): RunMap<V> {
    return new RunMap<V>({ positions: new Map(), keys: [] }, [], 0);
  }

  /** A RunMap with the entries of `map`, in its iteration order. */
  static from<V>(map: ReadonlyMap<string, V>): RunMap<V> {
    if (map instanceof RunMap) return map as RunMap<V>;
    let out = RunMap.empty<V>();
    for (const [key, value] of map) out = out.set(key, value);
    return out;
  }

  private position(key: string): number | undefined {
    const position = this.index.positions.get(key);
    return position !== undefined && position < this.size ? position : undefined;
  }

  get(key: string): V | undefined {
    const position = this.position(key);
    return position === undefined ? undefined : this.at(position);
  }

  has(key: string): boolean {
    return this.position(key) !== undefined;
  }

  private at(position: number): V {
    return (this.chunks[position >>> SHIFT] as readonly V[])[position & MASK] as V;
  }

  /** A new map with `key` set to `value`; this one is left as it was. */
  set(key: string, value: V): RunMap<V> {
    const existing = this.position(key);
    if (existing !== undefined) {
      return new RunMap(this.index, this.write(existing, value), this.size);
    }
    let index = this.index;
    if (index.keys.length !== this.size) {
      // An older map: the shared index already holds keys this one must not see.
      const keys = index.keys.slice(0, this.size);
      index = { positions: new Map(keys.map((k, i) => [k, i])), keys };
    }
    index.positions.set(key, this.size);
    index.keys.push(key);
    return new RunMap(index, this.write(this.size, value), this.size + 1);
  }

  private write(position: number, value: V): (readonly V[])[] {
    const chunks = this.chunks.slice();
    const at = position >>> SHIFT;
    const chunk = at < chunks.length ? (chunks[at] as readonly V[]).slice() : [];
    chunk[position & MASK] = value;
    chunks[at] = chunk;
    return chunks;
  }

  *entries(): MapIterator<[string, V]> {
    for (let i = 0; i < this.size; i++) yield [this.index.keys[i] as string, this.at(i)];
  }

  *keys(): MapIterator<string> {
    for (let i = 0; i < this.size; i++) yield this.index.keys[i] as string;
  }

  *values(): MapIterator<V> {
    for (let i = 0; i < this.size; i++) yield this.at(i);
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(
    callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void,
    thisArg?: unknown,
  ): void {
    for (let i = 0; i < this.size; i++) {
      callback.call(thisArg, this.at(i), this.index.keys[i] as string, this);
    }
  }

  get [Symbol.toStringTag](): string {
    return 'RunMap';
  }
}

interface KeyIndex {
  readonly positions: Map<string, number>;
  readonly keys: string[];
}

const SHIFT = 5;
/** Values per chunk. */
const CHUNK = 1 << SHIFT;
const MASK = CHUNK - 1;
