/**
 * The console's shell: the key prompt (keyed mode), what the key may do (`viewer { scopes }`),
 * the header (views, live state) and the routed view.
 */
import { Provider } from '@urql/preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { checkAccess, createConsoleClient, type Live, storedKey, storeKey } from './client';
import { ConsoleViewerDocument } from './generated/graphql';
import { LiveContext, type Scopes, ScopesContext, useLive, useScopes } from './live';
import { href, useRoute } from './router';
import { ApprovalsView } from './views/approvals';
import { BadLinkView } from './views/bad-link';
import { DiffView } from './views/diff';
import { ProjectionView } from './views/projection';
import { RunView } from './views/run';
import { RunsView } from './views/runs';
import { ThreadView } from './views/thread';
import { ThreadsView } from './views/threads';

type Access =
  | { state: 'checking' }
  | { state: 'key-needed'; rejected: boolean }
  | { state: 'ready'; key: string | undefined }
  | { state: 'error'; message: string };

export function App() {
  const [access, setAccess] = useState<Access>({ state: 'checking' });
  const check = (key: string | undefined, entered: boolean) => {
    setAccess({ state: 'checking' });
    checkAccess(key).then(
      (answer) => {
        if (answer === 'ok') {
          storeKey(key);
          setAccess({ state: 'ready', key });
        } else {
          storeKey(undefined);
          setAccess({ state: 'key-needed', rejected: entered || key !== undefined });
        }
      },
      (error: unknown) => setAccess({ state: 'error', message: String(error) }),
    );
  };
  useEffect(() => check(storedKey(), false), []);
  if (access.state === 'checking') return <Splash text="Connecting to Weft…" />;
  if (access.state === 'error')
    return <Splash text={`Cannot reach the server: ${access.message}`} />;
  if (access.state === 'key-needed') {
    return <KeyPrompt rejected={access.rejected} onKey={(key) => check(key, true)} />;
  }
  return <Connected apiKey={access.key} onSignOut={() => check(undefined, false)} />;
}

function Splash({ text }: { text: string }) {
  return (
    <main class="splash">
      <h1>Weft Console</h1>
      <p role="status">{text}</p>
    </main>
  );
}

function KeyPrompt({ rejected, onKey }: { rejected: boolean; onKey: (key: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <main class="splash">
      <h1>Weft Console</h1>
      <form
        class="key-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim() !== '') onKey(value.trim());
        }}
      >
        <p>This server requires an API key. It is kept in this tab only (sessionStorage).</p>
        {rejected && (
          <p class="error" role="alert">
            The key was refused (unknown, revoked or malformed).
          </p>
        )}
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <button type="submit">Connect</button>
      </form>
    </main>
  );
}

const READ_ONLY: Scopes = { read: true, write: false, approve: false };

function Connected({ apiKey, onSignOut }: { apiKey: string | undefined; onSignOut: () => void }) {
  const { client, live } = useMemo(() => createConsoleClient(apiKey), [apiKey]);
  // Reading until the server says more: the view starts loading at once, not after this round
  // trip (on a large thread, a part of the wait for its first paint); write and approve controls
  // appear when the answer grants them.
  const [scopes, setScopes] = useState<Scopes>(READ_ONLY);
  useEffect(() => {
    let cancelled = false;
    client
      .query(ConsoleViewerDocument, {}, { requestPolicy: 'network-only' })
      .toPromise()
      .then((result) => {
        // Unanswered (an older server): show only what every key may try, reading.
        const held = new Set<string>(result.data?.viewer.scopes ?? []);
        if (!cancelled)
          setScopes({ read: true, write: held.has('WRITE'), approve: held.has('APPROVE') });
      });
    return () => {
      cancelled = true;
    };
  }, [client]);
  return (
    <Provider value={client}>
      <LiveContext.Provider value={live}>
        <ScopesContext.Provider value={scopes}>
          <Shell keyed={apiKey !== undefined} onSignOut={onSignOut} live={live} />
        </ScopesContext.Provider>
      </LiveContext.Provider>
    </Provider>
  );
}

function Shell({ keyed, onSignOut }: { keyed: boolean; onSignOut: () => void; live: Live }) {
  const route = useRoute();
  const { state } = useLive();
  const scopes = useScopes();
  const nav: Array<[string, string, string]> = [
    ['threads', 'Threads', href.threads()],
    ['runs', 'Runs', href.runs()],
    ['approvals', 'Approvals', href.approvals()],
    ['diff', 'Diff', href.diff()],
    ['projection', 'Projection', href.projection()],
  ];
  const active = route.view === 'thread' ? 'threads' : route.view === 'run' ? 'runs' : route.view;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Weft Console</span>
        <nav aria-label="Views">
          {nav.map(([view, label, link]) => (
            <a key={view} href={link} aria-current={active === view ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class={`live live-${state}`} role="status" data-live={state}>
          {state === 'connected'
            ? 'Live'
            : state === 'reconnecting'
              ? 'Reconnecting…'
              : 'Connecting…'}
        </span>
        <span class="scopes" title="What this key may do">
          {['read', scopes.write ? 'write' : '', scopes.approve ? 'approve' : '']
            .filter(Boolean)
            .join(' · ')}
        </span>
        <ThemeToggle />
        {keyed && (
          <button
            type="button"
            class="link"
            onClick={() => {
              storeKey(undefined);
              onSignOut();
            }}
          >
            Forget key
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {route.view === 'threads' && <ThreadsView />}
        {route.view === 'thread' && <ThreadView key={route.id} id={route.id} />}
        {route.view === 'runs' && <RunsView />}
        {route.view === 'run' && (
          <RunView
            key={`${route.threadId}/${route.runId}`}
            threadId={route.threadId}
            runId={route.runId}
          />
        )}
        {route.view === 'approvals' && <ApprovalsView />}
        {route.view === 'diff' && <DiffView a={route.a} b={route.b} />}
        {route.view === 'projection' && <ProjectionView id={route.id} />}
        {route.view === 'bad-link' && <BadLinkView link={route.link} problem={route.problem} />}
      </main>
    </>
  );
}

type Theme = 'system' | 'dark' | 'light';
const THEMES: readonly Theme[] = ['system', 'dark', 'light'];
const THEME_KEY = 'weft-console-theme';

function applyTheme(theme: Theme): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** Follows the system's light or dark preference, or the one chosen here (kept in this browser). */
function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(() => {
    const saved = localStorage.getItem(THEME_KEY) as Theme | null;
    return saved !== null && THEMES.includes(saved) ? saved : 'system';
  });
  useEffect(() => {
    applyTheme(theme);
    if (theme === 'system') localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, theme);
  }, [theme]);
  const next = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length]!;
  return (
    <button
      type="button"
      class="link theme"
      data-theme-choice={theme}
      title={`Theme: ${theme}; switch to ${next}`}
      onClick={() => setTheme(next)}
    >
      Theme: {theme}
    </button>
  );
}
