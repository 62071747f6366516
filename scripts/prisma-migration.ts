/**
 * `npm run prisma:migration -- <name> [--empty]`: writes the next migration for both providers,
 * `prisma/<provider>/migrations/<NNNN>_<name>/migration.sql`, with the offline WASM schema engine.
 *
 * The SQL is the engine's `diff` from the previous migration's end state to the current
 * `prisma/<provider>/schema.prisma` (from empty for the first). Each migration directory keeps
 * that end state as `end-state.prisma` (a copy of the schema it was generated from), so no
 * database or shadow database is needed. The runner applies only `migration.sql`; the store tests
 * prove that a database migrated from scratch matches the current schema.
 *
 * `--empty` writes an empty migration.sql for hand-written SQL (e.g. a data migration) when the
 * schema has not changed. Without it, an unchanged schema is an error (nothing to migrate).
 * Never edit a migration once it has been applied anywhere: the runner rejects changed checksums.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { diff, type Provider } from './lib/schema-engine.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PROVIDERS: Provider[] = ['sqlite', 'postgres'];
const NAME = /^[a-z0-9]+(?:_[a-z0-9]+)*$/;
const END_STATE = 'end-state.prisma';

function fail(message: string): never {
  console.error(`prisma:migration: ${message}`);
  process.exit(1);
}

function existingMigrations(provider: Provider): string[] {
  const dir = join(ROOT, 'prisma', provider, 'migrations');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const empty = args.includes('--empty');
  const names = args.filter((a) => !a.startsWith('--'));
  const name = names[0];
  if (name === undefined || names.length !== 1 || !NAME.test(name)) {
    fail('usage: npm run prisma:migration -- <snake_case_name> [--empty]');
  }

  const lists = PROVIDERS.map(existingMigrations);
  const [first, ...others] = lists;
  if (others.some((list) => list.join('\n') !== first?.join('\n'))) {
    fail(
      'the providers have different migration lists; every migration must exist for both:\n' +
        PROVIDERS.map((p, i) => `  ${p}: ${lists[i]?.join(', ') || '(none)'}`).join('\n'),
    );
  }
  const previous = first?.at(-1);
  const number = previous === undefined ? 1 : Number.parseInt(previous.slice(0, 4), 10) + 1;
  const dirName = `${String(number).padStart(4, '0')}_${name}`;

  const planned: Array<{ provider: Provider; dir: string; sql: string; schema: string }> = [];
  for (const provider of PROVIDERS) {
    const schemaPath = join(ROOT, 'prisma', provider, 'schema.prisma');
    const schema = readFileSync(schemaPath, 'utf8');
    const migrationsDir = join(ROOT, 'prisma', provider, 'migrations');
    const endStatePath =
      previous === undefined ? undefined : join(migrationsDir, previous, END_STATE);
    if (endStatePath !== undefined && !existsSync(endStatePath)) {
      fail(`${relative(ROOT, endStatePath)} is missing; it records the schema after ${previous}`);
    }
    const result = await diff({
      from: endStatePath === undefined ? { kind: 'empty' } : { kind: 'schema', path: endStatePath },
      to: { kind: 'schema', path: schemaPath, content: schema },
    });
    if (result.empty && !empty) {
      fail(
        `prisma/${provider}/schema.prisma has not changed since ${previous ?? 'empty'}; ` +
          'nothing to migrate (pass --empty for a hand-written migration)',
      );
    }
    if (!result.empty && empty) {
      fail(`--empty, but prisma/${provider}/schema.prisma has changes: drop --empty`);
    }
    const sql = result.empty ? '-- Hand-written migration: put its SQL here.\n' : result.sql;
    planned.push({ provider, dir: join(migrationsDir, dirName), sql, schema });
  }

  for (const { dir, sql, schema } of planned) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'migration.sql'), sql);
    writeFileSync(join(dir, END_STATE), schema);
    console.log(`prisma:migration: wrote ${relative(ROOT, join(dir, 'migration.sql'))}`);
  }
}

await main();
