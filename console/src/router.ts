/** Hash routes (#/threads, #/thread/<id>, …): a link is a plain anchor, back and forward work. */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'threads' }
  | { view: 'thread'; id: string }
  | { view: 'runs' }
  | { view: 'approvals' }
  | { view: 'diff'; a: string; b: string }
  | { view: 'projection'; id: string };

export function parseRoute(hash: string): Route {
  const [view = '', ...rest] = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (view === 'thread' && rest[0]) return { view: 'thread', id: rest[0] };
  if (view === 'runs') return { view: 'runs' };
  if (view === 'approvals') return { view: 'approvals' };
  if (view === 'diff') return { view: 'diff', a: rest[0] ?? '', b: rest[1] ?? '' };
  if (view === 'projection') return { view: 'projection', id: rest[0] ?? '' };
  return { view: 'threads' };
}

export const href = {
  threads: () => '#/threads',
  thread: (id: string) => `#/thread/${encodeURIComponent(id)}`,
  runs: () => '#/runs',
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
