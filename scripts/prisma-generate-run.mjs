/**
 * `prisma generate --schema <schema>` offline, run by the project's Prisma CLI (`cli`, the path of
 * prisma/build/index.js): resolves to the command's exit code and output. Every Prisma CLI
 * command first tries to download the native schema engine, which fails without internet;
 * `generate` does not use it, and PRISMA_SCHEMA_ENGINE_BINARY pointing at any existing file skips
 * the download.
 */
import { spawn } from 'node:child_process';

export function runPrismaGenerate(cli, schema, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'generate', '--schema', schema], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // Any existing file will do: generate never runs it.
        PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
        CHECKPOINT_DISABLE: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        PRISMA_DISABLE_WARNINGS: '1',
      },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
