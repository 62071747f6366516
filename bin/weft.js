#!/usr/bin/env node
// The compiled CLI. From a checkout that has not been built yet, say how to build it in one line
// (a bare import would fail with ERR_MODULE_NOT_FOUND and a stack trace).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(main)) {
  await import(main.href);
} else {
  console.error(
    'weft: dist/ is not built: run `npm run build` first (or run from source: npm run weft -- <command>)',
  );
  process.exitCode = 2;
}
