/**
 * WeftStore: LangGraph's long-term memory store (`BaseStore`) on Weft's semantic memory. Every
 * put is a new version of a memory node in one Weft thread per tenant (`langgraph-store`), with
 * the thread and run that wrote it, so an item has a history, time travel and redaction like
 * any other Weft memory; a batch of puts is one log entry. Reads fold the thread's log once per
 * process and then only what was appended since (any process may write), so a read costs one
 * query for the new entries.
 */
import {
  BaseStore,
  type GetOperation,
  type IndexConfig,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from '@langchain/langgraph-checkpoint';
import type { NodeInput } from '../core/thread/index.js';
import type { Engine } from '../engine/index.js';
import { fromEngine, WeftSaverError } from './errors.js';
import {
  type CurrentItem,
  itemId,
  memoryKey,
  type Provenance,
  STORE_MEMORY_TYPE,
  STORE_THREAD_ID,
  type StoredContent,
  StoreFold,
  storedContent,
} from './store-fold.js';
import { currentWriter, withRuns } from './store-provenance.js';
import {
  hasPrefix,
  listNamespaces,
  matchesFilter,
  packVector,
  rankByVector,
  textsAt,
  toItem,
} from './store-query.js';

export type { Provenance } from './store-fold.js';

export interface WeftStoreOptions {
  /** An engine from `openEngine(url)` (or a tenant's view of one: `engine.forTenant(t)`). */
  engine: Engine;
  /** Semantic search: LangGraph's index config (an embeddings model, its dims, the fields). */
  index?: IndexConfig;
  /** Expiry: a default time to live in minutes, and whether reads extend it (default true). */
  ttl?: { defaultTtl?: number; refreshOnRead?: boolean };
}

export interface PutOptions {
  /** Minutes this version lives; null for never. Default: the store's `ttl.defaultTtl`. */
  ttl?: number | null;
}

/** One version of an item, oldest first in `history`. */
export interface ItemVersion {
  nodeId: string;
  logIndex: number;
  recordedAt: string;
  /** The value written; null for a delete (or a version since redacted). */
  value: Record<string, unknown> | null;
  writtenBy: Provenance | undefined;
}

/** Reads and deletes accept what LangGraph's BaseStore accepts for them. */
const LOOKUP = { allowEmpty: true, allowReservedRoot: true };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A refresh rewrites an item's expiry only once a tenth of its TTL has passed. */
const REFRESH_FRACTION = 0.1;

export class WeftStore extends BaseStore {
  private readonly fold = new StoreFold();
  private created = false;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly fields: readonly string[];

  constructor(private readonly options: WeftStoreOptions) {
    super();
    this.fields = options.index?.fields ?? ['$'];
  }

  /** The Weft thread holding the items (per tenant: an engine's tenant view names its own). */
  get threadId(): string {
    return STORE_THREAD_ID;
  }

  override async get(
    namespace: string[],
    key: string,
    options?: { refreshTtl?: boolean },
  ): Promise<Item | null> {
    const [item = null] = await this.batch([{ namespace, key }]);
    if (item !== null && (options?.refreshTtl ?? true)) await this.refresh([[namespace, key]]);
    return item;
  }

  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options?: PutOptions,
  ): Promise<void> {
    validateNamespace(namespace);
    await this.write(
      [{ namespace, key, value, ...(index === undefined ? {} : { index }) }],
      options,
    );
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    // The whole batch is checked before anything is written: a bad operation writes nothing.
    for (const op of operations) {
      if ('value' in op && op.value !== null) validateNamespace(op.namespace);
      else if ('namespace' in op) validateNamespace(op.namespace, LOOKUP);
      else if ('namespacePrefix' in op) validateNamespace(op.namespacePrefix, LOOKUP);
      if ('value' in op && op.value !== null && !isRecord(op.value)) {
        throw new WeftSaverError('INVALID_CONFIG', `the value of ${op.key} must be an object`);
      }
    }
    // Reads answer as of the batch's start, and its puts land after them (as InMemoryStore).
    await this.catchUp();
    const results: unknown[] = [];
    for (const op of operations) {
      if ('value' in op) results.push(undefined);
      else if ('namespacePrefix' in op) results.push(await this.searchOperation(op));
      else if ('matchConditions' in op || 'limit' in op) {
        results.push(this.listOperation(op as ListNamespacesOperation));
      } else results.push(this.getOperation(op as GetOperation));
    }
    const puts = operations.filter((op): op is PutOperation => 'value' in op);
    if (puts.length > 0) await this.write(puts);
    return results as OperationResults<Op>;
  }

  /** Every version of an item, oldest first, with who wrote it: the store's time travel. */
  async history(namespace: string[], key: string): Promise<ItemVersion[]> {
    validateNamespace(namespace);
    const read = await this.options.engine.readEntries(STORE_THREAD_ID, 0);
    if (!read.ok) {
      if (read.error.code === 'NOT_FOUND') return [];
      throw fromEngine(read.error, 'reading the store');
    }
    const wanted = itemId(namespace, key);
    const versions: ItemVersion[] = [];
    for (const entry of read.value) {
      const nodes = (entry.event as { nodes?: Array<{ id: string; payload?: unknown }> }).nodes;
      if (entry.event.type !== 'nodes_appended') continue;
      for (const node of nodes ?? []) {
        const content = storedContent(node.payload);
        if (content === undefined || itemId(content.ns, content.key) !== wanted) continue;
        versions.push({
          nodeId: node.id,
          logIndex: entry.index,
          recordedAt: entry.recordedAt,
          value: content.value,
          writtenBy: content.by,
        });
      }
    }
    const writers = await withRuns(
      this.options.engine,
      versions.map((v) => v.writtenBy),
    );
    return versions.map((v, i) => ({ ...v, writtenBy: writers[i] }));
  }

  /** Writes a delete for every expired item (reads already treat them as gone); the count. */
  async sweepExpired(now = new Date()): Promise<number> {
    await this.catchUp();
    const expired = [...this.fold.items.values()].filter((i) => isExpired(i, now));
    if (expired.length === 0) return 0;
    await this.write(
      expired.map((i) => ({ namespace: i.content.ns, key: i.content.key, value: null })),
    );
    return expired.length;
  }

  private getOperation(op: GetOperation): Item | null {
    const current = this.fold.items.get(itemId(op.namespace, op.key));
    return current === undefined || isExpired(current) ? null : toItem(current);
  }

  private async searchOperation(op: SearchOperation): Promise<SearchItem[]> {
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const candidates = [...this.fold.items.values()]
      .filter(
        (i) =>
          !isExpired(i) &&
          hasPrefix(i.content.ns, op.namespacePrefix) &&
          matchesFilter(i.content.value!, op.filter),
      )
      .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
    const embeddings = this.options.index?.embeddings;
    if (op.query !== undefined && op.query !== '' && embeddings !== undefined) {
      return rankByVector(candidates, await embeddings.embedQuery(op.query), offset, limit);
    }
    return candidates.slice(offset, offset + limit).map(toItem);
  }

  private listOperation(op: ListNamespacesOperation): string[][] {
    const live = [...this.fold.items.values()].filter((i) => !isExpired(i));
    return listNamespaces(
      live.map((i) => i.content.ns),
      op,
    );
  }

  /** Extends the expiry of items read, once a tenth of their TTL has passed since it was set. */
  private async refresh(keys: Array<[string[], string]>): Promise<void> {
    if (this.options.ttl?.refreshOnRead === false) return;
    const now = Date.now();
    const due = keys.flatMap(([namespace, key]) => {
      const item = this.fold.items.get(itemId(namespace, key));
      const ttl = item?.content.ttl;
      if (item === undefined || ttl === undefined) return [];
      const since = now - Date.parse(item.expirySetAt);
      return since >= ttl * 60_000 * REFRESH_FRACTION ? [item] : [];
    });
    if (due.length === 0) return;
    await this.write(
      due.map((i) => ({ namespace: i.content.ns, key: i.content.key, value: i.content.value })),
      undefined,
      due,
    );
  }

  /** One log entry for the puts and deletes of a batch (the last put of an item wins). */
  private write(
    puts: PutOperation[],
    options?: PutOptions,
    refreshing?: CurrentItem[],
  ): Promise<void> {
    const run = this.queue.then(() => this.writeNow(puts, options, refreshing));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async writeNow(
    puts: PutOperation[],
    options: PutOptions | undefined,
    refreshing: CurrentItem[] | undefined,
  ): Promise<void> {
    const last = new Map<string, PutOperation>();
    for (const op of puts) last.set(itemId(op.namespace, op.key), op);
    const by = currentWriter();
    const ttl =
      options?.ttl === undefined ? this.options.ttl?.defaultTtl : (options.ttl ?? undefined);
    const nodes: NodeInput[] = [];
    for (const [i, op] of [...last.values()].entries()) {
      const refresh = refreshing?.[i];
      const content: StoredContent = {
        ns: [...op.namespace],
        key: op.key,
        value: op.value,
        ...(op.value === null ? {} : await this.expiry(refresh?.content.ttl ?? ttl)),
        ...(op.value === null ? {} : await this.vectorsOf(op, refresh)),
        ...(by === undefined ? {} : { by }),
        ...(refresh === undefined ? {} : { refreshed: true as const }),
      };
      nodes.push(memoryNode(content));
    }
    await this.ensureThread();
    const appended = await this.options.engine.appendNodes({ threadId: STORE_THREAD_ID, nodes });
    if (!appended.ok) throw fromEngine(appended.error, 'writing to the store');
    const { logIndex, nodes: written } = appended.value;
    if (logIndex !== this.fold.length) return this.catchUp(); // others wrote in between
    // The entry just written, folded without reading it back (its nodes carry its time).
    this.fold.apply({
      index: logIndex,
      recordedAt: written[0]!.createdAt,
      event: { type: 'nodes_appended', nodes: written },
    } as never);
  }

  private async expiry(ttl: number | undefined): Promise<Partial<StoredContent>> {
    if (ttl === undefined) return {};
    if (!(ttl > 0) || !Number.isFinite(ttl)) {
      throw new WeftSaverError(
        'INVALID_CONFIG',
        `ttl must be a positive number of minutes, not ${ttl}`,
      );
    }
    return { ttl, expiresAt: new Date(Date.now() + ttl * 60_000).toISOString() };
  }

  /** The embeddings of a put's indexed fields, packed; kept as they were on a TTL refresh. */
  private async vectorsOf(
    op: PutOperation,
    refresh: CurrentItem | undefined,
  ): Promise<Partial<StoredContent>> {
    if (refresh !== undefined) {
      return refresh.content.vectors === undefined ? {} : { vectors: refresh.content.vectors };
    }
    const embeddings = this.options.index?.embeddings;
    if (embeddings === undefined || op.index === false || op.value === null) return {};
    const texts: Array<[string, string]> = [];
    for (const path of op.index ?? this.fields) {
      const found = textsAt(op.value, path);
      for (const [i, text] of found.entries()) {
        texts.push([found.length > 1 ? `${path}.${i}` : path, text]);
      }
    }
    if (texts.length === 0) return {};
    const vectors = await embeddings.embedDocuments(texts.map(([, text]) => text));
    return {
      vectors: Object.fromEntries(texts.map(([field], i) => [field, packVector(vectors[i]!)])),
    };
  }

  private async ensureThread(): Promise<void> {
    if (this.created || this.fold.length > 0) return;
    const created = await this.options.engine.createThread({
      threadId: STORE_THREAD_ID,
      metadata: { langgraph: { store: true } },
      nodeTypes: [
        { name: STORE_MEMORY_TYPE, description: 'An item of the LangGraph store (WeftStore)' },
      ],
    });
    if (!created.ok && created.error.code !== 'CONFLICT') {
      throw fromEngine(created.error, 'creating the store thread');
    }
    this.created = true;
  }

  private async catchUp(): Promise<void> {
    const read = await this.options.engine.readEntries(STORE_THREAD_ID, this.fold.length);
    if (!read.ok) {
      if (read.error.code === 'NOT_FOUND') return;
      throw fromEngine(read.error, 'reading the store');
    }
    for (const entry of read.value) if (entry.index === this.fold.length) this.fold.apply(entry);
  }
}

function memoryNode(content: StoredContent): NodeInput {
  const key = memoryKey(content.ns, content.key);
  return {
    kind: 'semantic',
    payload: { type: STORE_MEMORY_TYPE, key, content: content as never },
    resourceKey: `semantic:${STORE_MEMORY_TYPE}:${key}`,
    parents: [],
    advance: false,
  };
}

function isExpired(item: CurrentItem, now = new Date()): boolean {
  const at = item.content.expiresAt;
  return at !== undefined && Date.parse(at) <= now.getTime();
}
