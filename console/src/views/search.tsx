/**
 * Full-text search over node payloads (`searchNodes`) from the threads list: the best matches,
 * each with its thread, kind, time and the matching words highlighted.
 */
import { useQuery } from '@urql/preact';
import { ConsoleSearchDocument } from '../generated/graphql';
import { href } from '../router';
import { When } from './common';

/** The snippet with its highlighted ranges marked. */
function Snippet({
  text,
  highlights,
}: {
  text: string;
  highlights: { start: number; length: number }[];
}) {
  const parts: Array<string | { mark: string }> = [];
  let at = 0;
  for (const h of [...highlights].sort((a, b) => a.start - b.start)) {
    if (h.start < at) continue;
    parts.push(text.slice(at, h.start), { mark: text.slice(h.start, h.start + h.length) });
    at = h.start + h.length;
  }
  parts.push(text.slice(at));
  return (
    <span class="snippet">
      {parts.map((p, i) => (typeof p === 'string' ? p : <mark key={i}>{p.mark}</mark>))}
    </span>
  );
}

export function SearchResults({ query }: { query: string }) {
  const [result] = useQuery({ query: ConsoleSearchDocument, variables: { query, first: 20 } });
  if (result.error) {
    return (
      <p class="error" role="alert">
        Search failed: {result.error.message.replace(/^\[GraphQL\] /, '')}
      </p>
    );
  }
  if (!result.data) return <p role="status">Searching…</p>;
  const hits = result.data.searchNodes.edges.map((e) => e.node);
  return (
    <section class="panel search-results" aria-label="Search results">
      <h2>
        Nodes matching “{query}” ({hits.length}
        {hits.length === 20 ? ', the best 20' : ''})
      </h2>
      {hits.length === 0 ? (
        <p>No node's text matches.</p>
      ) : (
        <ul>
          {hits.map((h) => (
            <li key={`${h.threadId}/${h.node.id}`} data-hit-thread={h.threadId}>
              <a href={href.thread(h.threadId)}>{h.threadId}</a> · {h.node.kind.toLowerCase()} ·{' '}
              <When iso={h.node.createdAt} />
              <br />
              <Snippet text={h.snippet.text} highlights={h.snippet.highlights} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
