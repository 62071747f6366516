#!/usr/bin/env node
/**
 * The `weft` command. Today only the pure core exists; the server, migrations and data commands
 * arrive with the durable engine and the API, and each says so instead of pretending to work.
 */
const [command = 'help'] = process.argv.slice(2);

const PLANNED: Record<string, string> = {
  serve: 'the GraphQL server',
  migrate: 'database migrations',
  keys: 'API key management',
  export: 'thread export',
  import: 'thread import',
  verify: 'log verification against a database',
  replay: 'replay from a database',
};

if (command === 'help' || command === '--help' || command === '-h') {
  console.log('Usage: weft <serve|migrate|keys|export|import|verify|replay>');
  process.exit(0);
}
const what = PLANNED[command];
if (what === undefined) {
  console.error(`weft: unknown command '${command}'. Run 'weft help' for the list.`);
  process.exit(2);
}
console.error(
  `weft ${command}: ${what} is not built yet — this version ships Weft's pure core library only ` +
    '(see README.md, "Status"). Use the library from src/index.ts meanwhile.',
);
process.exit(1);
