#!/usr/bin/env node
/**
 * The `weft` command (DESIGN §8). Exit codes: 0 success, 1 the command failed (a tampered log,
 * a refused import, a server that could not start), 2 usage errors (unknown command, missing or
 * malformed arguments, invalid configuration).
 */
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2));
