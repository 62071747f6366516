/**
 * `weft projection`: the prompt of a thread stored in a real SQLite file, equal to the compiler's
 * on the same state; `--explain`; typed failures and their exit codes (1 failed, 2 usage).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPT_TOKEN_COUNTERS } from '../../src/core/projection/gpt-tokenizer.js';
import { compileProjection, type ProjectionInput } from '../../src/core/projection/index.js';
import { openEngine } from '../../src/engine/index.js';
import { weftIn } from './support.js';

let dir: string;
let url: string;
const ids = new Map<string, string>();

function ok<T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
}

/** Runs `weft …` in this process with DATABASE_URL set, capturing its output. */
const weft = (args: string[]) => weftIn(args, { DATABASE_URL: url });

/** The compiler on the state of t1 as stored (a fresh engine replays it from the database). */
async function expected(input: ProjectionInput, omittedLimit = 0) {
  const engine = await openEngine(url);
  try {
    const state = ok(await engine.getState('t1'));
    return compileProjection(state, input, { omittedLimit, tokenCounters: GPT_TOKEN_COUNTERS });
  } finally {
    await engine.close();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'weft-cli-projection-'));
  url = `file:${join(dir, 'weft.db')}`;
  const engine = await openEngine(url);
  const add = async (label: string, node: Parameters<typeof engine.appendNodes>[0]['nodes'][0]) =>
    ids.set(label, ok(await engine.appendNodes({ threadId: 't1', nodes: [node] })).nodes[0]!.id);
  ok(await engine.createThread({ threadId: 't1' }));
  await add('system', { kind: 'system', payload: 'be careful' });
  await add('goal', { kind: 'goal', payload: 'migrate the config loader' });
  await add('zeppelin', { kind: 'inference', payload: { text: 'the zeppelin needs a permit' } });
  await add('old', {
    kind: 'resource',
    resourceKey: 'resource:file:config.ts',
    payload: { body: 'OLD-BODY-ALPHA' },
  });
  ok(
    await engine.appendNodes({
      threadId: 't1',
      nodes: Array.from({ length: 40 }, (_, i) => ({
        kind: 'inference' as const,
        payload: { text: `routine step ${i}` },
      })),
    }),
  );
  await add('new', {
    kind: 'resource',
    resourceKey: 'resource:file:config.ts',
    payload: { body: 'NEW-BODY-BETA' },
  });
  ok(
    await engine.appendNodes({
      threadId: 't1',
      nodes: Array.from({ length: 40 }, (_, i) => ({
        kind: 'inference' as const,
        payload: { text: `later step ${i}` },
      })),
    }),
  );
  await engine.close();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('weft projection', { timeout: 120_000 }, () => {
  it('prints the prompt the compiler makes of the stored state, byte for byte', async () => {
    const r = await weft(['projection', 't1', '--query', 'zeppelin', '--max-nodes', '20']);
    expect(r.code, r.err).toBe(0);
    const view = ok(await expected({ query: 'zeppelin', maxNodes: 20 }));
    expect(r.out).toBe(`${view.prompt}\n`);
    expect(r.out).toContain('NEW-BODY-BETA');
    expect(r.out).not.toContain('OLD-BODY-ALPHA');
    expect(r.out).toContain('zeppelin');
    expect(r.err).toContain(`${view.tokenEstimate} tokens (chars)`);
  });

  it('counts with a real tokenizer when asked', async () => {
    const r = await weft(['projection', 't1', '--tokenizer', 'o200k', '--target', '400']);
    expect(r.code, r.err).toBe(0);
    const view = ok(await expected({ tokenizer: 'o200k', projectionTargetTokens: 400 }));
    expect(r.out).toBe(`${view.prompt}\n`);
    expect(r.err).toContain(`${view.tokenEstimate} tokens (o200k)`);
  });

  it('--explain lists the selected nodes with reasons and the omitted ones with scores', async () => {
    const r = await weft([
      'projection',
      't1',
      '--query',
      'zeppelin',
      '--explain',
      '--omitted',
      '200',
    ]);
    expect(r.code, r.err).toBe(0);
    const view = ok(await expected({ query: 'zeppelin' }, 200));
    const [prompt, explain] = [
      r.out.slice(0, view.prompt.length + 1),
      r.out.slice(view.prompt.length + 1),
    ];
    expect(prompt).toBe(`${view.prompt}\n`);
    const lines = explain.split('\n');
    expect(lines).toContain(
      `# selected ${view.selected.length} (sequence kind id score mandatory reasons)`,
    );
    const zeppelin = view.selected.find((s) => s.id === ids.get('zeppelin'))!;
    expect(lines).toContain(
      `#${zeppelin.sequence} inference ${zeppelin.id} score=${zeppelin.score} query_match`,
    );
    expect(lines.find((l) => l.includes(ids.get('system')!))).toContain('latest_system');
    expect(lines.find((l) => l.includes(` ${ids.get('new')!} `))).toContain('current_resource');
    const old = view.omitted.find((o) => o.id === ids.get('old'))!;
    expect(lines).toContain(
      `#${old.sequence} resource ${old.id} score=${old.score} superseded replacedBy=${ids.get('new')}`,
    );
    expect(lines.filter((l) => l.includes(' score=')).length).toBe(
      view.selected.length + view.omitted.length,
    );
  });

  it('fails with both figures on an impossible ceiling (exit 1)', async () => {
    const r = await weft(['projection', 't1', '--max', '10']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain('PROJECTION_OVERFLOW');
    expect(r.err).toMatch(/requires \d+ tokens, maxPromptTokens is 10/);
  });

  it('exits 1 for a missing thread and 2 for bad input', async () => {
    const missing = await weft(['projection', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('nope');
    const zero = await weft(['projection', 't1', '--max-nodes', '0']);
    expect(zero.code).toBe(2);
    expect(zero.err).toContain('$.maxNodes');
    const tokenizer = await weft(['projection', 't1', '--tokenizer', 'p50k']);
    expect(tokenizer.code).toBe(2);
    expect(tokenizer.err).toContain('--tokenizer must be one of chars, o200k, cl100k');
    expect((await weft(['projection'])).code).toBe(2);
    expect((await weft(['projection', 't1', '--target', 'lots'])).code).toBe(2);
  });
});
