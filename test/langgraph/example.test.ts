/**
 * The documented example (examples/langgraph/approval-agent.ts) runs as shipped: the graph pauses
 * for review, the approval is resolved, `waitForResume` hands back `{ decision, response }` and
 * the graph finishes, on a fresh SQLite file: approved, the tool runs; rejected, it does not and
 * the agent says so.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'weft-lg-example-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runExample = async (flag: string) => {
  const { stdout } = await promisify(execFile)(
    join(ROOT, 'node_modules', '.bin', 'tsx'),
    ['examples/langgraph/approval-agent.ts', flag, 'find weft'],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: `file:${join(dir, 'weft.db')}` },
      // An example that never gets its resolution must not outlive the test.
      timeout: 50_000,
    },
  );
  expect(stdout).toMatch(/Waiting for an approval of Weft thread lg_[0-9a-f]{32}/);
  return stdout;
};

describe('examples/langgraph/approval-agent.ts', () => {
  it('pauses at the review, resumes with the approval and answers from the tool', async () => {
    const stdout = await runExample('--auto-approve');
    expect(stdout).toContain(
      'Resolved: approved, resuming with {"decision":"approved","response":null}',
    );
    expect(stdout).toContain('Here is what I found: 3 documents about "find weft"');
  });

  it('rejected, does not run the tool and says so', async () => {
    const stdout = await runExample('--auto-reject');
    expect(stdout).toContain(
      'Resolved: rejected, resuming with {"decision":"rejected","response":null}',
    );
    expect(stdout).toContain('I did not run the search: the reviewer\'s decision was "rejected".');
    expect(stdout).not.toContain('documents about');
  });
});

describe('examples/langgraph/memory-agent.ts', () => {
  it('remembers a preference in one thread, uses it in another, and shows who wrote it', async () => {
    const { stdout } = await promisify(execFile)(
      join(ROOT, 'node_modules', '.bin', 'tsx'),
      ['examples/langgraph/memory-agent.ts'],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: `file:${join(dir, 'memory.db')}` },
        timeout: 50_000,
      },
    );
    expect(stdout).toContain('[support] (concise) Restart it.');
    expect(stdout).toMatch(
      /#\d+ \S+ \{"style":"concise"\} by thread onboarding \(lg_[0-9a-f]{32}\), run [0-9a-f-]{36}/,
    );
  });
});
