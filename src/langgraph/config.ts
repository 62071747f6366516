/** What a LangGraph config must name for the saver to find its thread. */
import type { RunnableConfig } from '@langchain/core/runnables';
import { WeftSaverError } from './errors.js';

/** The config's thread id and checkpoint namespace, or a WeftSaverError saying what is missing. */
export function required(config: RunnableConfig, what: string): { threadId: string; ns: string } {
  const threadId = config?.configurable?.thread_id as unknown;
  if (threadId === undefined || threadId === null || threadId === '') {
    throw new WeftSaverError(
      'INVALID_CONFIG',
      `cannot ${what}: config.configurable.thread_id is missing. Pass one, e.g. graph.invoke(input, { configurable: { thread_id: "my-thread" } })`,
    );
  }
  const ns = (config.configurable?.checkpoint_ns as unknown) ?? '';
  if (typeof ns !== 'string') {
    throw new WeftSaverError('INVALID_CONFIG', `cannot ${what}: checkpoint_ns must be a string`);
  }
  return { threadId: String(threadId), ns };
}
