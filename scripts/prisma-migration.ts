/**
 * `npm run prisma:migration -- <name> [--empty]`: writes the next migration for both providers,
 * `prisma/<provider>/migrations/<NNNN>_<name>/migration.sql`, offline.
 *
 * The SQL is the schema engine's diff from what the migrations directory builds to the current
 * `prisma/<provider>/schema.prisma`: the existing migrations are applied by Weft's own runner to
 * a scratch database (a temporary SQLite file; PGlite, an in-process Postgres, for Postgres),
 * which the engine introspects (scripts/lib/schema-engine-migrations.ts). The migrations are
 * the only record of the previous schema: nothing else is kept or needed, and hand-written SQL in
 * earlier migrations is taken into account. The new migration is then checked the same way: with
 * it applied, the scratch database must equal the schema, or nothing is written.
 *
 * `--empty` writes an empty migration.sql for hand-written SQL (e.g. a data migration) when the
 * schema has not changed. Without it, an unchanged schema is an error (nothing to migrate).
 * Never edit a migration once it has been applied anywhere: the runner rejects changed checksums.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Provider } from './lib/schema-engine.js';
import { diffFromMigrations } from './lib/schema-engine-migrations.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PRISMA = join(ROOT, 'prisma');
const PROVIDERS: Provider[] = ['sqlite', 'postgres'];
const NAME = /^[a-z0-9]+(?:_[a-z0-9]+)*$/;

function fail(message: string): never {
  console.error(`prisma:migration: ${message}`);
  process.exit(1);
}

function existingMigrations(provider: Provider): string[] {
  const dir = join(PRISMA, provider, 'migrations');
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

  const planned: Array<{ provider: Provider; file: string; sql: string }> = [];
  for (const provider of PROVIDERS) {
    const result = await diffFromMigrations(provider);
    if (result.empty && !empty) {
      fail(
        `the migrations already build prisma/${provider}/schema.prisma; ` +
          'nothing to migrate (pass --empty for a hand-written migration)',
      );
    }
    if (!result.empty && empty) {
      fail(`--empty, but prisma/${provider}/schema.prisma has changes: drop --empty`);
    }
    const sql = result.empty ? '-- Hand-written migration: put its SQL here.\n' : result.sql;
    const file = join(PRISMA, provider, 'migrations', dirName, 'migration.sql');
    planned.push({ provider, file, sql });
  }

  // Check the new migrations on a copy of prisma/ before writing them: applied after the others,
  // they must build exactly the schema.
  const copy = mkdtempSync(join(tmpdir(), 'weft-prisma-migration-'));
  const misses: string[] = [];
  try {
    cpSync(PRISMA, copy, { recursive: true });
    for (const { provider, file, sql } of planned) {
      const target = join(copy, relative(PRISMA, file));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, sql);
      const rest = await diffFromMigrations(provider, { prismaDir: copy });
      if (!rest.empty) misses.push(`${provider}, still to do:\n${rest.sql}`);
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  if (misses.length > 0) {
    fail(
      `the generated migration does not reach the schema (nothing written) on ${misses.join('')}`,
    );
  }

  for (const { file, sql } of planned) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, sql);
    console.log(`prisma:migration: wrote ${relative(ROOT, file)}`);
  }
}

await main();
