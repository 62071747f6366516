/** Hash routes (#/threads, #/thread/<id>, …): a link is a plain anchor, back and forward work. */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'threads' }
  | { view: 'thread'; id: string }
  | { view: 'runs' }
  | { view: 'run'; threadId: string; runId: string }
  | { view: 'approvals' }
  | { view: 'diff'; a: string; b: string }
  | { view: 'projection'; id: string }
  /** A link that opens nothing: a broken %-escape, or a page the console does not have. */
  | { view: 'bad-link'; link: string; problem: 'escape' | 'page' };

/**
 * The route of a location hash. Never throws: a link is outside text (pasted, shared, typed), and
 * one the console cannot read is shown as such instead of failing the page.
 */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodePart);
  if (parts.some((part) => part === undefined)) {
    return { view: 'bad-link', link: hash, problem: 'escape' };
  }
  const [view = '', ...rest] = parts as string[];
  if (view === 'thread' && rest[0]) return { view: 'thread', id: rest[0] };
  if (view === 'runs') return { view: 'runs' };
  if (view === 'run' && rest[0] && rest[1])
    return { view: 'run', threadId: rest[0], runId: rest[1] };
  if (view === 'approvals') return { view: 'approvals' };
  if (view === 'diff') return { view: 'diff', a: rest[0] ?? '', b: rest[1] ?? '' };
  if (view === 'projection') return { view: 'projection', id: rest[0] ?? '' };
  if (view === '' || view === 'threads') return { view: 'threads' };
  return { view: 'bad-link', link: hash, problem: 'page' };
}

/** `part` decoded; undefined for a broken %-escape (decodeURIComponent throws a URIError). */
function decodePart(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

export const href = {
  threads: () => '#/threads',
  thread: (id: string) => `#/thread/${encodeURIComponent(id)}`,
  runs: () => '#/runs',
  run: (threadId: string, runId: string) =>
    `#/run/${encodeURIComponent(threadId)}/${encodeURIComponent(runId)}`,
  approvals: () => '#/approvals',
  diff: (a = '', b = '') => `#/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`,
  projection: (id = '') => `#/projection/${encodeURIComponent(id)}`,
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
