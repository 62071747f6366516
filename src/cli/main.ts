#!/usr/bin/env node
/**
 * The `weft` command. Exit codes: 0 success, 1 the command failed (a tampered log, a refused
 * import, a failed migration), 2 usage errors (unknown command, missing or malformed arguments:
 * the error and one line of usage) and configuration errors (invalid variables, a database that
 * cannot be reached or does not exist, a missing or wrong encryption key, a port in use, a
 * non-loopback HOST without API keys, another server on the same SQLite file, a Redis that
 * REDIS_URL names but nothing answers on or that refuses its login, a database a newer Weft
 * migrated), each reported as one line saying what to do.
 */
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2));
