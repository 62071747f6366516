/**
 * The documented example (examples/langgraph/approval-agent.ts) runs as shipped: the graph pauses
 * for review, the approval is resolved, `waitForResume` hands the response back and the graph
 * finishes, on a fresh SQLite file.
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

describe('examples/langgraph/approval-agent.ts', () => {
  it('pauses at the review, resumes with the approval and answers', async () => {
    const { stdout } = await promisify(execFile)(
      join(ROOT, 'node_modules', '.bin', 'tsx'),
      ['examples/langgraph/approval-agent.ts', '--auto-approve', 'find weft'],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: `file:${join(dir, 'weft.db')}` } },
    );
    expect(stdout).toMatch(/Waiting for an approval of Weft thread lg_[0-9a-f]{32}/);
    expect(stdout).toContain('Resolved: approved {"approved":true}');
    expect(stdout).toContain('Here is what I found: 3 documents about "find weft"');
  });
});
