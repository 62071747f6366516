/** Diff two threads side by side: the common prefix, then what only each has. */
import { useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ConsoleDiffDocument } from '../generated/graphql';
import { href } from '../router';
import { When } from './common';

export function DiffView({ a, b }: { a: string; b: string }) {
  const [left, setLeft] = useState(a);
  const [right, setRight] = useState(b);
  const [result] = useQuery({ query: ConsoleDiffDocument, variables: { a, b }, pause: !a || !b });
  const diff = result.data?.diffThreads;
  const column = (title: string, events: NonNullable<typeof diff>['onlyA']) => (
    <section class="panel" aria-label={title}>
      <h2>{title}</h2>
      <ul class="events">
        {events.map((e) => (
          <li key={e.id}>
            #{e.index} {e.type} <When iso={e.recordedAt} />
          </li>
        ))}
        {events.length === 0 && <li>Nothing.</li>}
      </ul>
    </section>
  );
  return (
    <div class="view">
      <h1>Diff two threads</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          location.hash = href.diff(left.trim(), right.trim());
        }}
      >
        <label>
          Thread A <input value={left} onInput={(e) => setLeft(e.currentTarget.value)} />
        </label>
        <label>
          Thread B <input value={right} onInput={(e) => setRight(e.currentTarget.value)} />
        </label>
        <button type="submit">Diff</button>
      </form>
      {result.error && <p class="error">{result.error.message}</p>}
      {diff && (
        <>
          <p class="counts">Common prefix: {diff.commonPrefix} entries</p>
          <div class="thread-grid">
            {column(`Only in ${a}`, diff.onlyA)}
            {column(`Only in ${b}`, diff.onlyB)}
          </div>
        </>
      )}
    </div>
  );
}
