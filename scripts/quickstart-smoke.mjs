#!/usr/bin/env node
/**
 * `node scripts/quickstart-smoke.mjs`: the README's start command as a newcomer runs it, checked
 * end to end. It runs `npm start` with PORT=0 on a temporary data directory, waits for the
 * "serving" line, then checks that /healthz answers 200, that /graphql serves GraphiQL to a
 * browser, that `/` sends a browser to the built console at /console/, that a createThread mutation succeeds, and that SIGTERM stops the server cleanly
 * (exit code 0). Exit code 0 when all hold; 1 with the reason and the server's output otherwise.
 *
 * CI runs it straight after `npm ci` on a fresh clone, before any other step, so a start command
 * that depends on a setup step the README does not name fails here.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;

const dataDir = mkdtempSync(join(tmpdir(), 'weft-smoke-'));
let output = '';
const child = spawn('npm', ['start'], {
  cwd: root,
  env: {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: `file:${join(dataDir, 'weft.db')}`,
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const exited = new Promise((resolve) =>
  child.on('exit', (code, signal) => resolve({ code, signal })),
);
child.stdout.on('data', (d) => (output += d));
child.stderr.on('data', (d) => (output += d));

function fail(reason) {
  console.error(`quickstart smoke: FAILED: ${reason}\n--- npm start output ---\n${output}`);
  child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
}

function step(message) {
  console.log(`quickstart smoke: ${message}`);
}

async function serving() {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const match = /weft: serving (http:\/\/\S+)\/graphql/.exec(output);
    if (match) return match[1];
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 100))]);
    if (done) fail(`npm start exited (code ${done.code}, signal ${done.signal}) before serving`);
  }
  fail(`no "weft: serving" line within ${START_TIMEOUT_MS / 1000} s`);
}

const base = await serving();
step(`npm start serves ${base}`);

const health = await fetch(`${base}/healthz`);
if (health.status !== 200) fail(`/healthz answered ${health.status}`);
step('/healthz answers 200');

const page = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
const html = await page.text();
if (page.status !== 200 || !/graphiql/i.test(html)) {
  fail(`/graphql did not serve GraphiQL to a browser (status ${page.status})`);
}
step('/graphql serves GraphiQL to a browser');

const home = await fetch(`${base}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
if (home.status !== 302 || home.headers.get('location') !== '/console/') {
  fail(`/ did not send a browser to /console/ (status ${home.status})`);
}
const consolePage = await fetch(`${base}/console/`, { headers: { accept: 'text/html' } });
const consoleHtml = await consolePage.text();
const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(consoleHtml)?.[1];
if (consolePage.status !== 200 || asset === undefined) {
  fail(`/console/ did not serve the built console (status ${consolePage.status})`);
}
const script = await fetch(`${base}${asset}`);
if (script.status !== 200) fail(`${asset} answered ${script.status}`);
step('/ sends a browser to /console/, which serves the built console');

const created = await fetch(`${base}/graphql`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: JSON.stringify({
    query: `mutation { createThread(input: { metadata: { smoke: true } }) {
      __typename ... on CreateThreadSuccess { thread { id logLength } } ... on Error { code message } } }`,
  }),
});
const body = await created.json();
const thread = body?.data?.createThread?.thread;
if (created.status !== 200 || !thread?.id) {
  fail(`createThread did not succeed: ${created.status} ${JSON.stringify(body)}`);
}
step(`createThread made ${thread.id}`);

child.kill('SIGTERM');
const stopped = await Promise.race([
  exited,
  new Promise((r) => setTimeout(() => r(null), STOP_TIMEOUT_MS)),
]);
if (!stopped) fail(`still running ${STOP_TIMEOUT_MS / 1000} s after SIGTERM`);
if (stopped.code !== 0)
  fail(`exited with code ${stopped.code} (signal ${stopped.signal}) on SIGTERM`);
if (!/weft: stopped/.test(output)) fail('exited on SIGTERM without draining ("weft: stopped")');
step('SIGTERM drains the server and npm start exits with code 0');
rmSync(dataDir, { recursive: true, force: true });
step('passed');
