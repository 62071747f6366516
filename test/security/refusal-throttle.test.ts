/**
 * A client that keeps getting refused is slowed down, not the server: past a burst of refusals
 * per address, each further refusal is answered after a delay (same status, same body), which
 * bounds what a client that waits for its answers can make the server do. Successful requests
 * never wait and never count. The bucket arithmetic is checked with a clock of our own; the
 * server's wiring through the real port, with its /metrics counter. No timing is asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, REFUSAL_DEFAULTS } from '../../src/server/config.js';
import { createRefusalThrottle, isRefusal } from '../../src/server/refusal-throttle.js';
import { type AuthApp, createAuthApp } from '../auth/support.js';

describe('the refusal bucket', () => {
  it('answers a burst at once, then delays, and refills at its rate', () => {
    let now = 0;
    const throttle = createRefusalThrottle({
      burst: 3,
      perSecond: 2,
      delayMs: 250,
      now: () => now,
    });
    expect([1, 2, 3, 4, 5].map(() => throttle.delayFor('a'))).toEqual([0, 0, 0, 250, 250]);
    // Another address has its own bucket.
    expect(throttle.delayFor('b')).toBe(0);
    now += 1000; // two refusals' worth
    expect([1, 2, 3].map(() => throttle.delayFor('a'))).toEqual([0, 0, 250]);
    now += 60_000; // never more than the burst
    expect([1, 2, 3, 4].map(() => throttle.delayFor('a'))).toEqual([0, 0, 0, 250]);
  });

  it('is off with a delay of 0, and refusals are client errors only', () => {
    const off = createRefusalThrottle({ burst: 1, perSecond: 1, delayMs: 0 });
    expect(off.enabled).toBe(false);
    expect([1, 2, 3].map(() => off.delayFor('a'))).toEqual([0, 0, 0]);
    expect([400, 401, 403, 413, 429].every(isRefusal)).toBe(true);
    expect([200, 204, 304, 404, 500, 503].some(isRefusal)).toBe(false);
  });

  it('holds at most maxHeld answers; past that they go out at once; close sends what it held', () => {
    const throttle = createRefusalThrottle({ burst: 1, perSecond: 1, delayMs: 60_000, maxHeld: 2 });
    const sent: number[] = [];
    for (let i = 0; i < 5; i++) throttle.answer('a', () => sent.push(i));
    expect(sent).toEqual([0, 3, 4]);
    expect(throttle.held).toBe(2);
    expect(throttle.delayed).toBe(2);
    throttle.close();
    expect(sent.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(throttle.held).toBe(0);
  });

  it('has documented defaults, each configurable', () => {
    const config = loadConfig({});
    expect(config.refusals).toEqual(REFUSAL_DEFAULTS);
    expect(
      loadConfig({ WEFT_REFUSAL_BURST: '5', WEFT_REFUSAL_RATE: '2', WEFT_REFUSAL_DELAY_MS: '0' })
        .refusals,
    ).toEqual({ burst: 5, perSecond: 2, delayMs: 0 });
    expect(() => loadConfig({ WEFT_REFUSAL_DELAY_MS: 'soon' })).toThrow(/WEFT_REFUSAL_DELAY_MS/);
  });
});

describe('through the server (keyed mode, real port)', () => {
  let t: AuthApp;
  let url: string;
  let admin: string;

  beforeAll(async () => {
    t = await createAuthApp({
      env: { WEFT_REFUSAL_BURST: '3', WEFT_REFUSAL_RATE: '1', WEFT_REFUSAL_DELAY_MS: '200' },
    });
    admin = (await t.key('acme', ['admin'])).key;
    url = await t.listen();
  });
  afterAll(() => t?.close());

  const post = (key?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
  const delayedCount = async (): Promise<number> => {
    const text = await (
      await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${admin}` } })
    ).text();
    const line = text.split('\n').find((l) => l.startsWith('weft_delayed_refusals_total'));
    expect(line, text.slice(0, 500)).toBeDefined();
    return Number(line!.split(' ').at(-1));
  };

  it('answers every refusal with its status and body, delaying those past the burst', async () => {
    const before = await delayedCount();
    const answers = await Promise.all(Array.from({ length: 10 }, () => post()));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(401));
    for (const body of bodies) expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // 10 refusals, a burst of 3 (and at most a token or two refilled meanwhile).
    expect((await delayedCount()) - before).toBeGreaterThanOrEqual(5);
  });

  it('never delays or counts successful requests', async () => {
    const before = await delayedCount();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(admin)));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(await delayedCount()).toBe(before);
  });
});
