/**
 * `weft projection <threadId>`: the prompt view of a thread's current state through
 * the read API (`Reads.projection`), on the database named by DATABASE_URL. `--explain` adds why
 * each node is in the view and the best-scoring candidates left out.
 */
import { type OmittedNode, TOKENIZER_NAMES, type TokenizerName } from '../core/projection/index.js';
import { createReads, type ProjectionView, scopeReads } from '../reads/index.js';
import { createReadQueries } from '../store/read-model/queries.js';
import { intOption, parseArgs, UsageError } from './args.js';
import { describeError, noSuchThread, tenantOption, withDatabase } from './data-commands.js';

/** How many omitted candidates `--explain` lists (`--omitted N` to change it). */
export const DEFAULT_EXPLAIN_OMITTED = 20;

export function runProjection(argv: string[]): Promise<number> {
  const args = parseArgs(argv, {
    flags: ['explain'],
    values: ['query', 'target', 'max', 'max-nodes', 'tokenizer', 'omitted', 'tenant'],
  });
  const [threadId, extra] = args.positionals;
  if (threadId === undefined || extra !== undefined) {
    throw new UsageError('projection takes one thread id');
  }
  const tokenizer = args.options.get('tokenizer');
  if (tokenizer !== undefined && !(TOKENIZER_NAMES as readonly unknown[]).includes(tokenizer)) {
    throw new UsageError(
      `--tokenizer must be one of ${TOKENIZER_NAMES.join(', ')} (got ${String(tokenizer)})`,
    );
  }
  const query = args.options.get('query');
  if (query === true) throw new UsageError('--query needs a value');
  const input = {
    query,
    projectionTargetTokens: intOption(args, 'target'),
    maxPromptTokens: intOption(args, 'max'),
    maxNodes: intOption(args, 'max-nodes'),
    tokenizer: tokenizer as TokenizerName | undefined,
  };
  const explain = args.options.has('explain');
  const omitted = intOption(args, 'omitted') ?? DEFAULT_EXPLAIN_OMITTED;
  const tenant = tenantOption(args);
  return withDatabase('projection', async (db) => {
    // As the tenant sees it: its thread by id, with answers naming it by id.
    const reads = scopeReads(
      createReads(db.engine, createReadQueries(db.prisma, false, db.engine.store.codec)),
      db.engine.tenants,
      tenant,
    );
    const result = await reads.projection(threadId, input);
    if (!result.ok) {
      const e = result.error;
      if (e.code === 'NOT_FOUND' && e.entity === 'Thread') {
        console.error(`weft projection: ${noSuchThread(threadId, tenant)}`);
        return 1;
      }
      const figures =
        e.code === 'PROJECTION_OVERFLOW'
          ? ` (requires ${e.requiredTokens} tokens, maxPromptTokens is ${e.maxPromptTokens})`
          : '';
      console.error(`weft projection: thread ${threadId}: ${describeError(e)}${figures}`);
      return e.code === 'VALIDATION_FAILED' ? 2 : 1;
    }
    const view = result.value;
    process.stdout.write(`${view.prompt}\n`);
    if (explain) {
      const listed = view.omittedFor(omitted);
      if (!listed.ok) {
        console.error(`weft projection: ${describeError(listed.error)}`);
        return 2;
      }
      process.stdout.write(explanation(view, listed.value));
    }
    console.error(
      `weft projection: thread ${threadId}: ${view.tokenEstimate} tokens (${view.tokenizer}), ` +
        `${view.nodeIds.length} nodes shown, ${view.omittedCount} omitted, shrink level ${view.budget.shrinkLevel}`,
    );
    return 0;
  });
}

/** The `--explain` text: one line per selected node, then one per listed omitted node. */
export function explanation(view: ProjectionView, omitted: readonly OmittedNode[]): string {
  const lines = [
    '',
    `# selected ${view.selected.length} (sequence kind id score mandatory reasons)`,
    ...view.selected.map(
      (s) =>
        `#${s.sequence} ${s.kind} ${s.id} score=${s.score}${s.mandatory ? ' mandatory' : ''} ${s.reasons.join(',')}`,
    ),
    `# omitted ${omitted.length} of ${view.omittedCount}, best score first (sequence kind id score reason)`,
    ...omitted.map(
      (o) =>
        `#${o.sequence} ${o.kind} ${o.id} score=${o.score} ${o.reason}${o.replacedBy === undefined ? '' : ` replacedBy=${o.replacedBy}`}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
