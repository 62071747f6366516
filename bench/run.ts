/**
 * `npm run bench -- <suite...>`: runs the named benchmark suites (all when none is named).
 * Every figure is measured in this run, against a baseline measured in the same run.
 */
import os from 'node:os';

const SUITES: Record<string, () => Promise<unknown>> = {
  core: () => import('./core.js').then((m) => m.runCoreBench()),
  store: () => import('./store.js').then((m) => m.runStoreBench()),
  projection: () => import('./projection.js').then((m) => m.runProjectionBench()),
  api: () => import('./api.js').then((m) => m.runApiBench()),
  peers: () => import('./peers.js').then((m) => m.runPeersBench()),
  hostile: () => import('./hostile.js').then((m) => m.runHostileBench()),
  reads: () => import('./reads.js').then((m) => m.runReadsBench()),
  console: () => import('./console.js').then((m) => m.runConsoleBench()),
  forks: () => import('./forks.js').then((m) => m.runForksBench()),
  'query-layer': () => import('./query-layer.js').then((m) => m.runQueryLayerBench()),
  'event-loop': () => import('./event-loop.js').then((m) => m.runEventLoopBench()),
  otlp: () => import('./otlp.js').then((m) => m.runOtlpBench()),
  subscribers: () => import('./subscribers.js').then((m) => m.runSubscribersBench()),
};

const requested = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const names = requested.length > 0 ? requested : Object.keys(SUITES);
const unknown = names.filter((name) => !(name in SUITES));
if (unknown.length > 0) {
  console.error(
    `Unknown benchmark suite: ${unknown.join(', ')}. Available: ${Object.keys(SUITES).join(', ')}`,
  );
  process.exit(2);
}

console.log(
  `Weft benchmarks on ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, ` +
    `${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
for (const name of names) await SUITES[name]!();
