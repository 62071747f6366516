/**
 * Threads: newest activity first (or sorted by creation, either way), live (threadActivity
 * refetches the first page on each commit), a hundred at a time, with metadata and
 * pending-approval filters, counts, and a badge on threads waiting for a human.
 */
import { useQuery } from '@urql/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  ConsoleThreadActivityDocument,
  type ConsoleThreadSummaryFragment,
  ConsoleThreadsDocument,
  type ThreadFilter,
} from '../generated/graphql';
import { useFeed, useScopes } from '../live';
import { href } from '../router';
import { CreateThread } from './actions';
import {
  FilterSelect,
  orderOf,
  type Sort,
  sortOptions,
  When,
  type Within,
  WithinSelect,
} from './common';
import { SearchResults } from './search';

/** Threads per page. */
const PAGE = 100;
const SORTS = sortOptions('Last activity', 'Created');

interface PageEnd {
  hasNextPage: boolean;
  endCursor?: string | null | undefined;
  /** The threads on the page. */
  count?: number;
}

export function ThreadsView() {
  const [metadataText, setMetadataText] = useState('');
  const [waitingOnly, setWaitingOnly] = useState(false);
  const [within, setWithin] = useState<Within>({ label: '' });
  const [searchText, setSearchText] = useState('');
  const [searched, setSearched] = useState('');
  const metadata = useMemo(() => {
    if (metadataText.trim() === '') return { value: undefined, error: undefined };
    try {
      return { value: JSON.parse(metadataText) as unknown, error: undefined };
    } catch {
      return { value: undefined, error: 'Not JSON: e.g. {"team": "ops"}' };
    }
  }, [metadataText]);
  const [sort, setSort] = useState<Sort>('UPDATED_AT DESC');
  const filter: ThreadFilter = {
    ...(metadata.value === undefined ? {} : { metadata: metadata.value }),
    ...(waitingOnly ? { hasPendingApproval: true } : {}),
    ...(within.after === undefined ? {} : { updatedAfter: within.after }),
  };
  const orderBy = orderOf(sort);
  const [result, refetch] = useQuery({
    query: ConsoleThreadsDocument,
    variables: { first: PAGE, filter, orderBy },
  });
  // Pages after the first, by the cursor each starts after; gone when the list changes.
  const listKey = JSON.stringify([filter, sort]);
  const [later, setLater] = useState<{ key: string; cursors: string[]; ends: PageEnd[] }>({
    key: listKey,
    cursors: [],
    ends: [],
  });
  const pages = later.key === listKey ? later : { key: listKey, cursors: [], ends: [] };
  const cursor = useRef<string | undefined>(undefined);
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useFeed(
    ConsoleThreadActivityDocument,
    () => (cursor.current === undefined ? {} : { after: cursor.current }),
    (data) => {
      cursor.current = data.threadActivity.cursor;
      if (pending.current !== undefined) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        refetch({ requestPolicy: 'network-only' });
      }, 50);
    },
    [],
  );
  const threads = result.data?.threads.edges.map((e) => e.node) ?? [];
  const lastEnd: PageEnd | undefined =
    pages.cursors.length === 0
      ? result.data?.threads.pageInfo
      : pages.ends[pages.cursors.length - 1];
  const shown = threads.length + pages.ends.reduce((n, end) => n + (end?.count ?? 0), 0);
  const scopes = useScopes();
  return (
    <div class="view">
      <h1>Threads</h1>
      {scopes.write && <CreateThread />}
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Metadata contains
          <input
            type="text"
            placeholder='{"team": "ops"}'
            value={metadataText}
            onInput={(e) => setMetadataText(e.currentTarget.value)}
            aria-invalid={metadata.error !== undefined}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={waitingOnly}
            onChange={(e) => setWaitingOnly(e.currentTarget.checked)}
          />
          Waiting for a human only
        </label>
        <WithinSelect
          label="Active within"
          filter="active-within"
          value={within}
          onChange={setWithin}
        />
        <FilterSelect
          label="Sort by"
          filter="thread-sort"
          value={sort}
          options={SORTS}
          onChange={setSort}
        />
        {metadata.error && <span class="error">{metadata.error}</span>}
      </form>
      <form
        class="filters"
        aria-label="Search node text"
        onSubmit={(e) => {
          e.preventDefault();
          setSearched(searchText.trim());
        }}
      >
        <label>
          Text in any node{' '}
          <input
            type="search"
            value={searchText}
            placeholder='refund "order 42" -test'
            onInput={(e) => setSearchText(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Search</button>
        {searched !== '' && (
          <button
            type="button"
            class="link"
            onClick={() => {
              setSearched('');
              setSearchText('');
            }}
          >
            Clear
          </button>
        )}
      </form>
      {searched !== '' && <SearchResults query={searched} />}
      <p class="counts" data-testid="thread-counts">
        {result.data ? (
          <>
            <strong data-count="threads">{result.data.threads.totalCount}</strong> threads
            {shown < result.data.threads.totalCount && (
              <span data-count="shown"> ({shown} shown)</span>
            )}{' '}
            ·{' '}
            <a href={href.approvals()}>
              <strong data-count="pending">{result.data.pending.totalCount}</strong> pending
              approvals
            </a>
          </>
        ) : result.error ? (
          <span class="error">{result.error.message}</span>
        ) : (
          'Loading…'
        )}
      </p>
      {result.data && threads.length === 0 && (
        <EmptyThreads
          filtered={metadata.value !== undefined || waitingOnly || within.after !== undefined}
          canCreate={scopes.write}
        />
      )}
      <table
        class="list"
        aria-label={`Threads, ${SORTS.find(([v]) => v === sort)?.[1].toLowerCase() ?? ''}`}
        hidden={result.data !== undefined && threads.length === 0}
      >
        <thead>
          <tr>
            <th scope="col">Thread</th>
            <th scope="col">Metadata</th>
            <th scope="col">Entries</th>
            <th scope="col">Nodes</th>
            <th scope="col">Last activity</th>
          </tr>
        </thead>
        <ThreadRows threads={threads} />
        {pages.cursors.map((after, i) => (
          <LaterPage
            key={after}
            after={after}
            filter={filter}
            orderBy={orderBy}
            onEnd={(end) =>
              setLater((now) => {
                const base = now.key === listKey ? now : pages;
                const ends = base.ends.slice();
                ends[i] = end;
                return { ...base, ends };
              })
            }
          />
        ))}
      </table>
      {lastEnd?.hasNextPage && lastEnd.endCursor && (
        <button
          type="button"
          data-more="threads"
          onClick={() =>
            setLater({
              key: listKey,
              cursors: [...pages.cursors, lastEnd.endCursor!],
              ends: pages.ends,
            })
          }
        >
          Show {PAGE} more threads
        </button>
      )}
    </div>
  );
}

function ThreadRows({ threads }: { threads: ConsoleThreadSummaryFragment[] }) {
  return (
    <tbody>
      {threads.map((t) => (
        <tr key={t.id} data-thread-id={t.id}>
          <td>
            <a href={href.thread(t.id)}>{t.id}</a>
            {t.waiting.totalCount > 0 && (
              <span class="badge" data-badge="waiting">
                waiting for a human
              </span>
            )}
          </td>
          <td>
            <code>{t.metadata === null ? '' : JSON.stringify(t.metadata)}</code>
          </td>
          <td>{t.logLength}</td>
          <td>{t.nodeCount}</td>
          <td>
            <When iso={t.updatedAt} />
          </td>
        </tr>
      ))}
    </tbody>
  );
}

/**
 * A page after the first (not live: its threads keep their place until the list is sorted or
 * filtered again); tells where it ends, so the list knows whether there is more.
 */
function LaterPage({
  after,
  filter,
  orderBy,
  onEnd,
}: {
  after: string;
  filter: ThreadFilter;
  orderBy: ReturnType<typeof orderOf>;
  onEnd: (end: PageEnd) => void;
}) {
  const [result] = useQuery({
    query: ConsoleThreadsDocument,
    variables: { first: PAGE, after, filter, orderBy },
  });
  const page = result.data?.threads;
  useEffect(() => {
    if (page !== undefined) onEnd({ ...page.pageInfo, count: page.edges.length });
  }, [page]);
  if (result.error) {
    return (
      <tbody>
        <tr>
          <td colSpan={5} class="error">
            {result.error.message}
          </td>
        </tr>
      </tbody>
    );
  }
  return <ThreadRows threads={page?.edges.map((e) => e.node) ?? []} />;
}

/** What an empty list means, and how to fill it. */
function EmptyThreads({ filtered, canCreate }: { filtered: boolean; canCreate: boolean }) {
  if (filtered) {
    return (
      <p class="empty" data-empty="threads">
        No thread matches these filters.
      </p>
    );
  }
  return (
    <div class="empty" data-empty="threads">
      <p>
        <strong>No threads yet.</strong> A thread appears here, live, as soon as an agent writes
        one. To start one, {canCreate ? 'create it above, or ' : ''}send this mutation from the{' '}
        <a href="/graphql">GraphQL playground</a> with a key that can write:
      </p>
      <pre>{'mutation { createThread(input: { threadId: "hello" }) { __typename } }'}</pre>
      <p>
        or run a LangGraph agent with <code>WeftSaver</code> as its checkpointer (see the project's
        docs/langgraph.md).
      </p>
    </div>
  );
}
