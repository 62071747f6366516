/**
 * Live feeds: a subscription that (re)starts from its latest cursor whenever the WebSocket
 * reconnects (a server restart), so a view resumes with no gap; repeats are dropped by the
 * caller's own cursor check.
 */
import type { TypedDocumentNode } from '@urql/core';
import { useClient } from '@urql/preact';
import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { pipe, subscribe } from 'wonka';
import type { Live } from './client';

export const LiveContext = createContext<Live | undefined>(undefined);

export interface Scopes {
  read: boolean;
  write: boolean;
  approve: boolean;
}

export const ScopesContext = createContext<Scopes>({ read: true, write: false, approve: false });

export function useScopes(): Scopes {
  return useContext(ScopesContext);
}

/** The live connection's state and reconnection count, re-rendering on change. */
export function useLive(): { state: string; epoch: number } {
  const live = useContext(LiveContext);
  const [, force] = useState(0);
  useEffect(() => {
    const stop = live?.listen(() => force((n) => n + 1));
    // The socket may have connected between the render and this subscription (effects run after
    // paint, late on a loaded machine): read the state again, or the page shows "Connecting…" for
    // good.
    force((n) => n + 1);
    return stop;
  }, [live]);
  return { state: live?.state() ?? 'connecting', epoch: live?.epoch() ?? 0 };
}

/**
 * Subscribes to `document` with the variables `variables()` returns at (re)start — read the
 * latest cursor there — and hands every event to `onEvent`. `null` variables: not subscribed.
 */
export function useFeed<Data, Variables extends Record<string, unknown>>(
  document: TypedDocumentNode<Data, Variables>,
  variables: () => Variables | null,
  onEvent: (data: Data) => void,
  deps: readonly unknown[],
): void {
  const client = useClient();
  const { epoch } = useLive();
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const vars = useRef(variables);
  vars.current = variables;
  useEffect(() => {
    const v = vars.current();
    if (v === null) return;
    const { unsubscribe } = pipe(
      client.subscription(document, v),
      subscribe((result) => {
        if (result.data !== undefined && result.data !== null) handler.current(result.data);
      }),
    );
    return unsubscribe;
  }, [client, document, epoch, ...deps]);
}
