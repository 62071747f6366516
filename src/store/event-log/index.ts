export { createMemoryEventLogStore } from './memory.js';
export {
  createPrismaEventLogStore,
  type PrismaEventLogStore,
  type PrismaEventLogStoreOptions,
} from './prisma.js';
export type { EventLogProvider, RawQueryable, TransactionOptions } from './prisma-sql.js';
export type { AppendInput, EventLogStore, ForkInput, ReadOptions } from './types.js';
