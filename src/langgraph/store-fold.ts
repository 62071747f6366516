/**
 * WeftStore's items as its thread's log folds them: each put or delete is a `semantic` memory
 * node (type `langgraph-store`) whose content holds the namespace, key, value and what the store
 * needs beside it (expiry, packed vectors, provenance); the current node of each item is its
 * memory head. A redacted version reads as no value: the item is absent until it is put again.
 */
import { createHash } from 'node:crypto';
import type { LogEntry } from '../core/log/index.js';

export const STORE_THREAD_ID = 'langgraph-store';
export const STORE_MEMORY_TYPE = 'langgraph-store';

/** Which thread and run wrote a version: a LangGraph thread's Weft thread and its open run. */
export interface Provenance {
  /** The LangGraph thread_id the writing graph ran on. */
  langgraphThreadId?: string;
  /** Its Weft thread (`lg_…`), as WeftSaver names it. */
  threadId?: string;
  /** The checkpoint the writing step ran from (its run is found from it when asked). */
  checkpointId?: string;
  /** The Weft run of that invocation (in `history`, when WeftSaver started one). */
  runId?: string;
}

/** A version's content, as stored (once) in its memory node. */
export interface StoredContent {
  ns: string[];
  key: string;
  /** The item's value; null for a delete. */
  value: Record<string, unknown> | null;
  /** Time to live in minutes, and when this version expires (ISO). */
  ttl?: number;
  expiresAt?: string;
  /** Embeddings of the indexed fields: field path → base64 of little-endian float32s. */
  vectors?: Record<string, string>;
  by?: Provenance;
  /** A read's TTL refresh: the value as it was, a new expiry (updatedAt stays). */
  refreshed?: true;
}

export interface CurrentItem {
  content: StoredContent;
  nodeId: string;
  createdAt: string;
  updatedAt: string;
  /** When its expiry was last set (the version's time): refreshes are spaced by this. */
  expirySetAt: string;
  /** Its vectors unpacked, on the first semantic search that needs them. */
  unpacked?: Float32Array[];
}

/** The memory key of an item: readable where it can be, unique always (a hash of both parts). */
export function memoryKey(namespace: readonly string[], key: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([namespace, key]))
    .digest('hex');
  const readable = `${namespace.join('.')}.${key}`
    .toLowerCase()
    .replace(/[^a-z0-9_./:-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return `${readable}:${digest.slice(0, 24)}`;
}

export const itemId = (namespace: readonly string[], key: string) =>
  JSON.stringify([namespace, key]);

export class StoreFold {
  /** Entries folded so far: the index of the next entry to read. */
  length = 0;
  readonly items = new Map<string, CurrentItem>();
  /** Node id → the item it is the current version of (redactions find their item here). */
  private readonly byNode = new Map<string, string>();

  apply(entry: LogEntry): void {
    if (entry.index !== this.length) {
      throw new Error(`store fold: entry ${entry.index} does not follow ${this.length}`);
    }
    this.length += 1;
    const event = entry.event as unknown as {
      type: string;
      nodes?: Array<{ id: string; kind?: string; payload?: unknown }>;
    };
    if (event.type === 'nodes_redacted') {
      for (const { id } of event.nodes ?? []) this.redact(id);
      return;
    }
    if (event.type !== 'nodes_appended') return;
    for (const node of event.nodes ?? []) {
      const content = storedContent(node.payload);
      if (node.kind === 'semantic' && content !== undefined) {
        this.put(node.id, content, entry.recordedAt);
      }
    }
  }

  private put(nodeId: string, content: StoredContent, at: string): void {
    const id = itemId(content.ns, content.key);
    const previous = this.items.get(id);
    if (previous !== undefined) this.byNode.delete(previous.nodeId);
    if (content.value === null) {
      this.items.delete(id);
      return;
    }
    this.items.set(id, {
      content,
      nodeId,
      createdAt: previous?.createdAt ?? at,
      updatedAt: content.refreshed && previous !== undefined ? previous.updatedAt : at,
      expirySetAt: at,
    });
    this.byNode.set(nodeId, id);
  }

  private redact(nodeId: string): void {
    const id = this.byNode.get(nodeId);
    if (id === undefined) return;
    this.byNode.delete(nodeId);
    this.items.delete(id);
  }
}

/** The store content a memory node's payload holds, or undefined for any other payload. */
export function storedContent(payload: unknown): StoredContent | undefined {
  const p = payload as { type?: unknown; content?: unknown } | null;
  if (p?.type !== STORE_MEMORY_TYPE) return undefined;
  const c = p.content as Partial<StoredContent> | null;
  if (!Array.isArray(c?.ns) || typeof c.key !== 'string' || c.value === undefined) return undefined;
  return c as StoredContent;
}
