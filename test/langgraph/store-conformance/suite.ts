/**
 * A conformance suite for LangGraph stores (`BaseStore`): the behaviour of LangGraph's own store
 * tests (langgraphjs `libs/checkpoint` store tests and the Postgres store's integration tests;
 * the Python InMemoryStore/PostgresStore behaviours for filters and namespaces), written against
 * the public interface only, so any store can run it:
 *
 *   import { storeConformance } from './suite.js';
 *   storeConformance('MyStore', async ({ index }) => new MyStore({ index }));
 *
 * Each case gets a fresh, empty store from the factory. `tally` counts passes and failures per
 * store so a run can print them side by side (test/langgraph/store-conformance.test.ts).
 */
import { Embeddings } from '@langchain/core/embeddings';
import {
  type BaseStore,
  type IndexConfig,
  InvalidNamespaceError,
} from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';

export type StoreFactory = (config: { index?: IndexConfig }) => Promise<BaseStore>;

export interface Tally {
  passed: number;
  failed: number;
  cases: number;
  /** Of those, cases beyond what LangGraph's InMemoryStore does (PostgresStore's behaviour). */
  beyond: number;
}
export const tally = new Map<string, Tally>();

export interface ConformanceOptions {
  /**
   * Leave out the cases where LangGraph's InMemoryStore, the reference, is known to differ from
   * its PostgresStore (it keeps listing a namespace whose items were all deleted, and compares
   * object-valued filters by identity). Default false: a durable store should pass them.
   */
  reference?: boolean;
}

/**
 * Deterministic embeddings for the search cases: one dimension per vocabulary word, so a text's
 * similarity to a query is the overlap of their words.
 */
export class WordEmbeddings extends Embeddings {
  readonly documents: string[][] = [];
  constructor(private readonly vocabulary: readonly string[]) {
    super({});
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    this.documents.push(texts);
    return texts.map((t) => this.vector(t));
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }
  private vector(text: string): number[] {
    const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
    return this.vocabulary.map((w) => words.filter((x) => x === w).length);
  }
}

const VOCABULARY = ['python', 'typescript', 'tutorial', 'guide', 'cooking', 'pasta', 'garden'];

const keysOf = (items: Array<{ key: string }>) => items.map((i) => i.key).sort();

export function storeConformance(
  name: string,
  make: StoreFactory,
  options: ConformanceOptions = {},
): void {
  const counts: Tally = { passed: 0, failed: 0, cases: 0, beyond: 0 };
  tally.set(name, counts);
  const beyond = (title: string, body: () => Promise<void>) => {
    if (options.reference) return;
    counts.beyond += 1;
    check(`${title} (beyond the reference)`, body);
  };
  const check = (title: string, body: () => Promise<void>) => {
    counts.cases += 1;
    it(title, async () => {
      try {
        await body();
        counts.passed += 1;
      } catch (error) {
        counts.failed += 1;
        throw error;
      }
    });
  };
  const fresh = () => make({});
  const indexed = (fields?: string[]) => {
    const embeddings = new WordEmbeddings(VOCABULARY);
    const index: IndexConfig = {
      dims: VOCABULARY.length,
      embeddings,
      ...(fields === undefined ? {} : { fields }),
    };
    return make({ index }).then((store) => ({ store, embeddings }));
  };

  describe(`${name}: items`, () => {
    check('stores and retrieves an item with its namespace, key and times', async () => {
      const store = await fresh();
      await store.put(['users', 'u1'], 'prefs', { theme: 'dark', size: 3 });
      const item = await store.get(['users', 'u1'], 'prefs');
      expect(item).toMatchObject({
        namespace: ['users', 'u1'],
        key: 'prefs',
        value: { theme: 'dark', size: 3 },
      });
      expect(item!.createdAt).toBeInstanceOf(Date);
      expect(item!.updatedAt).toBeInstanceOf(Date);
    });

    check('an update replaces the value and keeps the creation time', async () => {
      const store = await fresh();
      await store.put(['docs'], 'd', { v: 1 });
      const first = await store.get(['docs'], 'd');
      await store.put(['docs'], 'd', { v: 2, extra: true });
      const second = await store.get(['docs'], 'd');
      expect(second!.value).toEqual({ v: 2, extra: true });
      expect(second!.createdAt.getTime()).toBe(first!.createdAt.getTime());
      expect(second!.updatedAt.getTime()).toBeGreaterThanOrEqual(first!.updatedAt.getTime());
    });

    check('a deleted item reads as null and leaves search', async () => {
      const store = await fresh();
      await store.put(['gone'], 'x', { a: 1 });
      await store.put(['gone'], 'y', { a: 2 });
      await store.delete(['gone'], 'x');
      expect(await store.get(['gone'], 'x')).toBeNull();
      expect(keysOf(await store.search(['gone']))).toEqual(['y']);
    });

    beyond('a namespace whose items were all deleted is no longer listed', async () => {
      const store = await fresh();
      await store.put(['gone'], 'x', { a: 1 });
      await store.put(['kept'], 'y', { a: 1 });
      await store.delete(['gone'], 'x');
      expect(await store.listNamespaces()).toEqual([['kept']]);
    });

    check('keeps complex JSON values as written', async () => {
      const store = await fresh();
      const value = {
        nested: { deep: { list: [1, 'two', { three: 3 }], empty: {} } },
        unicode: 'héllo ✓ 日本',
        flags: [true, false, null],
        number: -12.5e3,
      };
      await store.put(['json'], 'complex', value);
      expect((await store.get(['json'], 'complex'))!.value).toEqual(value);
    });

    check('returns null for a key or namespace that was never written', async () => {
      const store = await fresh();
      await store.put(['a'], 'k', { v: 1 });
      expect(await store.get(['a'], 'other')).toBeNull();
      expect(await store.get(['b'], 'k')).toBeNull();
    });

    check('keys and labels are exact: case and punctuation matter', async () => {
      const store = await fresh();
      await store.put(['Ns'], 'Key', { v: 'upper' });
      await store.put(['ns'], 'key', { v: 'lower' });
      await store.put(['ns'], 'a b', { v: 'space' });
      await store.put(['ns'], 'a-b', { v: 'dash' });
      expect((await store.get(['Ns'], 'Key'))!.value).toEqual({ v: 'upper' });
      expect((await store.get(['ns'], 'key'))!.value).toEqual({ v: 'lower' });
      expect((await store.get(['ns'], 'a b'))!.value).toEqual({ v: 'space' });
      expect((await store.get(['ns'], 'a-b'))!.value).toEqual({ v: 'dash' });
      expect(await store.get(['ns'], 'Key')).toBeNull();
    });

    check('refuses invalid namespaces on put, writing nothing', async () => {
      const store = await fresh();
      const bad: unknown[][] = [[], ['a.b'], [''], ['ok', ''], [1], ['langgraph', 'x']];
      for (const namespace of bad) {
        await expect(
          store.put(namespace as string[], 'k', { v: 1 }),
          JSON.stringify(namespace),
        ).rejects.toThrow(InvalidNamespaceError);
      }
      expect(await store.listNamespaces()).toEqual([]);
    });

    check('a batch answers each operation in order; its puts are read afterwards', async () => {
      const store = await fresh();
      const results = await store.batch([
        { namespace: ['batch'], key: 'item1', value: { data: 'first' } },
        { namespace: ['batch'], key: 'item2', value: { data: 'second' } },
        { namespacePrefix: ['nothing'], limit: 10, offset: 0 },
      ]);
      expect(results).toHaveLength(3);
      expect(results[0] ?? undefined, 'a put answers nothing').toBeUndefined();
      expect(results[1] ?? undefined).toBeUndefined();
      expect(results[2]).toEqual([]);
      const [one, two] = await store.batch([
        { namespace: ['batch'], key: 'item1' },
        { namespace: ['batch'], key: 'item2' },
      ]);
      expect(one!.value).toEqual({ data: 'first' });
      expect(two!.value).toEqual({ data: 'second' });
    });

    check('a batch with an invalid operation is refused and writes nothing', async () => {
      const store = await fresh();
      await expect(
        store.batch([
          { namespace: ['batch'], key: 'item1', value: { data: 'first' } },
          { namespace: [], key: 'item2', value: { data: 'invalid' } },
        ]),
      ).rejects.toThrow('Namespace cannot be empty');
      expect(await store.get(['batch'], 'item1')).toBeNull();
    });
  });

  describe(`${name}: search`, () => {
    const seeded = async () => {
      const store = await fresh();
      await store.put(['docs', 'a'], 'd1', { kind: 'report', score: 1, tags: ['x'] });
      await store.put(['docs', 'a'], 'd2', { kind: 'note', score: 5 });
      await store.put(['docs', 'b'], 'd3', { kind: 'report', score: 9, owner: { id: 7 } });
      await store.put(['docsx'], 'd4', { kind: 'report', score: 3 });
      await store.put(['other'], 'd5', { kind: 'report', score: 4 });
      return store;
    };

    check('searches a namespace and its children, not look-alike siblings', async () => {
      const store = await seeded();
      expect(keysOf(await store.search(['docs']))).toEqual(['d1', 'd2', 'd3']);
      expect(keysOf(await store.search(['docs', 'a']))).toEqual(['d1', 'd2']);
      expect(keysOf(await store.search([]))).toEqual(['d1', 'd2', 'd3', 'd4', 'd5']);
    });

    check('filters by field equality, several fields at once', async () => {
      const store = await seeded();
      expect(keysOf(await store.search(['docs'], { filter: { kind: 'report' } }))).toEqual([
        'd1',
        'd3',
      ]);
      expect(keysOf(await store.search([], { filter: { kind: 'report', score: 4 } }))).toEqual([
        'd5',
      ]);
    });

    beyond('filters by an object-valued field, compared by content', async () => {
      const store = await seeded();
      expect(keysOf(await store.search([], { filter: { owner: { id: 7 } } }))).toEqual(['d3']);
      expect(keysOf(await store.search([], { filter: { tags: ['x'] } }))).toEqual(['d1']);
    });

    check('filters with $eq, $ne, $gt, $gte, $lt, $lte', async () => {
      const store = await seeded();
      const keys = async (filter: Record<string, unknown>) =>
        keysOf(await store.search([], { filter }));
      expect(await keys({ score: { $eq: 5 } })).toEqual(['d2']);
      expect(await keys({ kind: { $ne: 'report' } })).toEqual(['d2']);
      expect(await keys({ score: { $gt: 4 } })).toEqual(['d2', 'd3']);
      expect(await keys({ score: { $gte: 4 } })).toEqual(['d2', 'd3', 'd5']);
      expect(await keys({ score: { $lt: 3 } })).toEqual(['d1']);
      expect(await keys({ score: { $lte: 3 } })).toEqual(['d1', 'd4']);
      expect(await keys({ score: { $gt: 1, $lt: 5 } })).toEqual(['d4', 'd5']);
    });

    check('filters with $in and $nin', async () => {
      const store = await seeded();
      expect(keysOf(await store.search([], { filter: { score: { $in: [1, 9] } } }))).toEqual([
        'd1',
        'd3',
      ]);
      expect(keysOf(await store.search(['docs'], { filter: { score: { $nin: [1, 9] } } }))).toEqual(
        ['d2'],
      );
    });

    check('pages with limit and offset (ten by default)', async () => {
      const store = await fresh();
      for (let i = 0; i < 15; i += 1) await store.put(['many'], `k${i}`, { i });
      expect(await store.search(['many'])).toHaveLength(10);
      const first = await store.search(['many'], { limit: 6, offset: 0 });
      const second = await store.search(['many'], { limit: 6, offset: 6 });
      const third = await store.search(['many'], { limit: 6, offset: 12 });
      expect(third).toHaveLength(3);
      const all = [...first, ...second, ...third].map((i) => i.key);
      expect(new Set(all).size).toBe(15);
    });

    check('finds nothing in a namespace that does not exist', async () => {
      const store = await seeded();
      expect(await store.search(['nope'])).toEqual([]);
    });
  });

  describe(`${name}: listNamespaces`, () => {
    const seeded = async () => {
      const store = await fresh();
      for (const ns of [
        ['a', 'b', 'c'],
        ['a', 'b', 'd', 'e'],
        ['a', 'b', 'd', 'i'],
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
        ['b', 'a', 'f'],
        ['users', '123'],
        ['users', '456', 'settings'],
        ['admin', 'users', '789'],
      ]) {
        await store.put(ns, 'k', { v: 1 });
      }
      return store;
    };

    check('lists every namespace, sorted', async () => {
      const store = await seeded();
      const all = await store.listNamespaces();
      expect(all).toHaveLength(9);
      expect(all).toEqual([...all].sort((x, y) => (x.join('\u0000') < y.join('\u0000') ? -1 : 1)));
    });

    check('filters by prefix and by suffix', async () => {
      const store = await seeded();
      expect(await store.listNamespaces({ prefix: ['a', 'b'] })).toEqual([
        ['a', 'b', 'c'],
        ['a', 'b', 'd', 'e'],
        ['a', 'b', 'd', 'i'],
        ['a', 'b', 'f'],
      ]);
      expect(await store.listNamespaces({ suffix: ['f'] })).toEqual([
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
        ['b', 'a', 'f'],
      ]);
    });

    check('cuts at maxDepth and merges what then coincides', async () => {
      const store = await seeded();
      expect(await store.listNamespaces({ prefix: ['a', 'b'], maxDepth: 3 })).toEqual([
        ['a', 'b', 'c'],
        ['a', 'b', 'd'],
        ['a', 'b', 'f'],
      ]);
    });

    check('pages with limit and offset', async () => {
      const store = await seeded();
      const all = await store.listNamespaces();
      expect(await store.listNamespaces({ limit: 3, offset: 2 })).toEqual(all.slice(2, 5));
    });

    check('matches * in a prefix or suffix as any label', async () => {
      const store = await seeded();
      expect(await store.listNamespaces({ prefix: ['a', '*', 'f'] })).toEqual([
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
      ]);
      expect(await store.listNamespaces({ suffix: ['*', 'f'] })).toEqual([
        ['a', 'b', 'f'],
        ['a', 'c', 'f'],
        ['b', 'a', 'f'],
      ]);
    });

    check('combines prefix, suffix and depth; nothing matching is an empty list', async () => {
      const store = await seeded();
      expect(await store.listNamespaces({ prefix: ['a'], suffix: ['f'], maxDepth: 2 })).toEqual([
        ['a', 'b'],
        ['a', 'c'],
      ]);
      expect(await store.listNamespaces({ prefix: ['zzz'] })).toEqual([]);
    });
  });

  describe(`${name}: semantic search`, () => {
    check('ranks by similarity to the query, best first, with scores', async () => {
      const { store } = await indexed(['text']);
      await store.put(['docs'], 'py', { text: 'python tutorial' });
      await store.put(['docs'], 'ts', { text: 'typescript guide' });
      await store.put(['docs'], 'cook', { text: 'cooking pasta' });
      const found = await store.search(['docs'], { query: 'python tutorial' });
      expect(found[0]!.key).toBe('py');
      expect(found[0]!.score).toBeCloseTo(1, 5);
      const scores = found.map((i) => i.score ?? -1);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    });

    check('embeds only the configured fields', async () => {
      const { store, embeddings } = await indexed(['title']);
      await store.put(['docs'], 'a', { title: 'garden guide', body: 'python python python' });
      await store.put(['docs'], 'b', { title: 'python tutorial', body: 'garden' });
      expect(embeddings.documents.flat()).toEqual(['garden guide', 'python tutorial']);
      const [best] = await store.search(['docs'], { query: 'python' });
      expect(best!.key).toBe('b');
    });

    check('index: false stores an item unembedded; it is found, without a score', async () => {
      const { store, embeddings } = await indexed(['text']);
      await store.put(['docs'], 'plain', { text: 'python' }, false);
      await store.put(['docs'], 'embedded', { text: 'pasta' });
      expect(embeddings.documents.flat()).toEqual(['pasta']);
      const found = await store.search(['docs'], { query: 'python' });
      expect(found.map((i) => i.key)).toEqual(['embedded', 'plain']);
      expect(found[1]!.score).toBeUndefined();
    });

    check('a put may name its own fields, nested and in lists', async () => {
      const { store, embeddings } = await indexed(['text']);
      await store.put(['docs'], 'book', { chapters: [{ c: 'cooking' }, { c: 'garden' }] }, [
        'chapters[*].c',
      ]);
      expect(embeddings.documents.flat()).toEqual(['cooking', 'garden']);
      const [best] = await store.search(['docs'], { query: 'garden' });
      expect(best).toMatchObject({ key: 'book' });
      expect(best!.score).toBeCloseTo(1, 5);
    });

    check('combines a filter with the query', async () => {
      const { store } = await indexed(['text']);
      await store.put(['docs'], 'a', { text: 'python guide', lang: 'en' });
      await store.put(['docs'], 'b', { text: 'python tutorial', lang: 'fr' });
      const found = await store.search(['docs'], { query: 'python', filter: { lang: 'fr' } });
      expect(found.map((i) => i.key)).toEqual(['b']);
    });
  });
}
