/**
 * Which Weft threads hold which LangGraph (thread, namespace): a Weft thread of its own per
 * tenant whose resource nodes name them, so `list` across threads and `deleteThread` over every
 * namespace of a thread find them with one log read, in any process. Registered before the
 * thread is created, so a crash in between leaves a harmless name with no checkpoints.
 */
import type { Engine } from '../engine/index.js';
import { fromEngine } from './errors.js';

export const DIRECTORY_THREAD_ID = 'langgraph-directory';

export interface DirectoryEntry {
  threadId: string;
  checkpointNs: string;
  weftThreadId: string;
}

export class Directory {
  private length = 0;
  private readonly entries = new Map<string, DirectoryEntry>();

  constructor(private readonly engine: Engine) {}

  async list(): Promise<DirectoryEntry[]> {
    const read = await this.engine.readEntries(DIRECTORY_THREAD_ID, this.length);
    if (!read.ok) {
      if (read.error.code === 'NOT_FOUND') return [];
      throw fromEngine(read.error, 'reading the LangGraph thread directory');
    }
    for (const entry of read.value) {
      this.length = entry.index + 1;
      const nodes = (entry.event as { nodes?: Array<{ payload: unknown }> }).nodes ?? [];
      for (const node of nodes) {
        const p = node.payload as Partial<DirectoryEntry> | null;
        if (typeof p?.weftThreadId === 'string' && typeof p.threadId === 'string') {
          this.entries.set(p.weftThreadId, {
            threadId: p.threadId,
            checkpointNs: typeof p.checkpointNs === 'string' ? p.checkpointNs : '',
            weftThreadId: p.weftThreadId,
          });
        }
      }
    }
    return [...this.entries.values()];
  }

  async register(entry: DirectoryEntry): Promise<void> {
    const known = await this.list();
    if (known.some((e) => e.weftThreadId === entry.weftThreadId)) return;
    if (this.length === 0) {
      const created = await this.engine.createThread({
        threadId: DIRECTORY_THREAD_ID,
        metadata: { langgraph: { directory: true } },
      });
      if (!created.ok && created.error.code !== 'CONFLICT') {
        throw fromEngine(created.error, 'creating the LangGraph thread directory');
      }
    }
    const appended = await this.engine.appendNodes({
      threadId: DIRECTORY_THREAD_ID,
      nodes: [
        {
          kind: 'resource',
          parents: [],
          advance: false,
          resourceKey: `langgraph:thread:${entry.weftThreadId}`,
          payload: { ...entry },
        },
      ],
    });
    if (!appended.ok) throw fromEngine(appended.error, 'registering a LangGraph thread');
  }
}
