/**
 * Gate for tests that drive a real browser. A test run must pass where no browser is installed
 * (a fresh user machine), and say what it skipped; CI sets REQUIRE_BROWSER=1 so that a missing
 * Chromium fails the run instead of silently skipping. Mirrors `services.ts` for Postgres.
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { describe } from 'vitest';
import type { Availability } from './services.js';

/** The browser the tests drive (Debian's `chromium`; Playwright cannot download one here). */
export const CHROMIUM_PATH = process.env.WEFT_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Offline, quiet, sandbox-free headless flags (no background networking: this machine has no internet). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function chromiumAvailable(): Availability {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return { available: true };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { available: false, reason: `no executable Chromium at ${CHROMIUM_PATH}: ${why}` };
  }
}

const browser = chromiumAvailable();
if (!browser.available) {
  if (process.env.REQUIRE_BROWSER === '1') {
    throw new Error(`REQUIRE_BROWSER=1 but Chromium is unavailable: ${browser.reason}`);
  }
  console.warn(
    `[weft tests] browser tests SKIPPED: ${browser.reason} ` +
      '(install Debian chromium or set WEFT_TEST_CHROMIUM, or REQUIRE_BROWSER=1 to fail instead)',
  );
}

/**
 * `describe` for browser suites: runs when Chromium is installed, is reported as skipped (with
 * the reason printed once per file) when it is not, and fails the file under REQUIRE_BROWSER=1.
 */
export function describeWithBrowser(name: string, body: () => void): void {
  describe.skipIf(!browser.available)(`${name} [chromium]`, body);
}

export interface LaunchedBrowser {
  context: BrowserContext;
  /** Closes the browser and removes its profile directory. */
  close(): Promise<void>;
}

/**
 * Headless Chromium with the offline flags and a fresh, throwaway profile directory. Playwright
 * refuses `--user-data-dir` in `launch()` args; `launchPersistentContext(dir)` is its way to pass
 * one (the browser closes with the context).
 */
export async function launchChromium(
  options: { viewport?: { width: number; height: number }; extraArgs?: string[] } = {},
): Promise<LaunchedBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'weft-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS, ...(options.extraArgs ?? [])],
      ...(options.viewport === undefined ? {} : { viewport: options.viewport }),
    });
    return {
      context,
      async close() {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}
