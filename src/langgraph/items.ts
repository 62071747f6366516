/**
 * The array items (messages) of one thread as this process knows them: each item decoded once,
 * and the hash of each live item object, so a step costs what it adds rather than the whole
 * conversation. The same objects go to successive reads and come back in later `put`s, which is
 * safe only while nobody changes them in place — LangGraph's contract (a node returns updates; a
 * message is replaced by one with the same id), but nothing enforces it. So every object is kept
 * with a shallow fingerprint (its own keys and their values), and an object whose fields were
 * reassigned since (`message.content = …`) is not trusted: a read decodes the stored item afresh,
 * and a `put` it comes back in as an update stores it anew.
 *
 * Reads check every item they hand out, so what a process reads is what is stored. A `put` checks
 * only the items it adds when its list goes on from the list held for its parent with the very
 * same objects: the items a step neither added nor returned as updates are the ones the read at
 * the start of the run checked (see `rewritten`). A change deeper inside a field
 * (`message.tool_calls[0].args.q = …`) keeps the same field values and is not seen;
 * docs/langgraph.md says so.
 */

/**
 * What an object looked like when it was stored or decoded. A LangChain message serializes the
 * fields its `lc_kwargs` names, read from the message: when those are all among the usual
 * message fields they are compared by name (a few plain property reads per message, which keeps
 * a check of a long conversation well under a millisecond); any other object by its own keys.
 */
export type Known = MessagePrint | { hash: string; keys: string[]; values: unknown[] };

/**
 * A message's fields as they were, held in the one object with its hash: the check of a long
 * list is bound by memory (the messages are spread over the heap), so each message costs the
 * reads of two objects, its own and this one, and no third.
 */
class MessagePrint {
  readonly hash: string;
  readonly lcKwargs: unknown;
  readonly content: unknown;
  readonly id: unknown;
  readonly name: unknown;
  readonly toolCalls: unknown;
  readonly toolCallId: unknown;
  readonly additionalKwargs: unknown;
  readonly responseMetadata: unknown;
  readonly usageMetadata: unknown;
  readonly invalidToolCalls: unknown;
  readonly status: unknown;
  readonly artifact: unknown;

  constructor(hash: string, m: MessageLike) {
    this.hash = hash;
    this.lcKwargs = m.lc_kwargs;
    this.content = m.content;
    this.id = m.id;
    this.name = m.name;
    this.toolCalls = m.tool_calls;
    this.toolCallId = m.tool_call_id;
    this.additionalKwargs = m.additional_kwargs;
    this.responseMetadata = m.response_metadata;
    this.usageMetadata = m.usage_metadata;
    this.invalidToolCalls = m.invalid_tool_calls;
    this.status = m.status;
    this.artifact = m.artifact;
  }

  matches(m: MessageLike): boolean {
    return (
      m.lc_kwargs === this.lcKwargs &&
      m.content === this.content &&
      m.id === this.id &&
      m.name === this.name &&
      m.tool_calls === this.toolCalls &&
      m.tool_call_id === this.toolCallId &&
      m.additional_kwargs === this.additionalKwargs &&
      m.response_metadata === this.responseMetadata &&
      m.usage_metadata === this.usageMetadata &&
      m.invalid_tool_calls === this.invalidToolCalls &&
      m.status === this.status &&
      m.artifact === this.artifact
    );
  }
}

/**
 * A list value as this process last held it: its item hashes, and (when it was read or written
 * here) the item objects with what each looked like, position by position — so the next step,
 * whose list starts with the same objects, is checked by position without a lookup per item.
 * The arrays are append-only and may run on past `length`: a list that extends one held before
 * pushes its new items onto that one's arrays when no other list has yet, so a step neither
 * copies the conversation nor leaves a new copy of it for the garbage collector to move.
 */
export interface HeldList {
  /** How many items the list has: its arrays' items at [0, length). */
  length: number;
  hashes: readonly string[];
  objects?: readonly unknown[];
  knowns?: ReadonlyArray<Known | undefined>;
}

/**
 * Lists kept per (channel, version) of one thread: a step needs its parent's and its own (per list
 * channel); more only holds the objects of old versions in memory longer.
 */
const LIST_CACHE = 8;

/** Checkpoints remembered as rewritten (see ItemCache.rewritten). */
const REWRITTEN_KEPT = 256;

export class ItemCache {
  private readonly decoded = new Map<string, unknown>();
  private readonly known = new WeakMap<object, Known>();
  private readonly lists = new Map<string, HeldList>();
  /**
   * Checkpoints whose tasks wrote back an item this process holds (a node returning a message it
   * was handed, perhaps edited in place): a `put` whose parent is one of them checks its whole
   * list, not only what it adds. Keyed by checkpoint, because LangGraph (in its default
   * durability) sends a step's writes as soon as the step ends but chains the checkpoints, so the
   * next step's writes may come before this step's checkpoint. Only the most recent are kept: a
   * run that resumes an older checkpoint reads it first, and that read hands out fresh objects
   * for any that changed, so an edited one comes back as a different object.
   */
  private readonly rewritten = new Set<string>();
  /** Every object stored or decoded here, changed since or not (see `holds`). */
  private readonly seen = new WeakSet<object>();

  /** Whether `item` is an object this process stored or decoded (changed since or not). */
  holds(item: unknown): boolean {
    return typeof item === 'object' && item !== null && this.seen.has(item);
  }

  /** Records that the tasks of checkpoint `id` wrote back items this process holds. */
  markRewritten(id: string): void {
    this.rewritten.delete(id);
    this.rewritten.add(id);
    if (this.rewritten.size > REWRITTEN_KEPT) {
      this.rewritten.delete(this.rewritten.values().next().value!);
    }
  }

  /** Whether a list put on top of checkpoint `parentId` must be checked in full. */
  mustRecheck(parentId: string | undefined): boolean {
    return parentId === undefined || this.rewritten.has(parentId);
  }

  /** The hash `item` was stored under, when it is an object this process saw and it is unchanged. */
  hashOf(item: unknown): string | undefined {
    return this.knownOf(item)?.hash;
  }

  /** How `item` was stored, when it is an object this process saw and it is unchanged. */
  knownOf(item: unknown): Known | undefined {
    if (typeof item !== 'object' || item === null) return undefined;
    const known = this.known.get(item);
    if (known === undefined) return undefined;
    if (unchanged(item, known)) return known;
    // Changed in place: neither the old hash nor the decoded copy under it stand for it now.
    this.known.delete(item);
    if (this.decoded.get(known.hash) === item) this.decoded.delete(known.hash);
    return undefined;
  }

  /** Records that `item` (just encoded, or just decoded) is stored under `hash`. */
  remember(item: unknown, hash: string, decoded = false): Known | undefined {
    if (decoded) this.decoded.set(hash, item);
    if (typeof item !== 'object' || item === null) return undefined;
    let known: Known;
    if (isPlainMessage(item)) {
      known = new MessagePrint(hash, item);
    } else {
      const keys = Object.keys(item);
      known = { hash, keys, values: keys.map((k) => (item as Record<string, unknown>)[k]) };
    }
    this.known.set(item, known);
    this.seen.add(item);
    return known;
  }

  /**
   * `held`'s item at `i` when it is `item` (or, without `item`, any) unchanged and stored under
   * `hash` (when given): the cheap check of a list's items position by position.
   */
  static heldAt(held: HeldList | undefined, i: number, item?: unknown): Known | undefined {
    if (held === undefined || i >= held.length) return undefined;
    const known = held.knowns?.[i];
    if (known === undefined) return undefined;
    const object = held.objects![i];
    if (item !== undefined && object !== item) return undefined;
    return unchanged(object as object, known) ? known : undefined;
  }

  /**
   * How many of the first `length` items (`items`, or with `hashes` instead: their hashes) are
   * `held`'s own objects at the same positions — unchanged, unless `trust` (the objects are
   * compared, their fields are not: see the class comment). A grown list is checked this way with
   * plain comparisons, no lookup per item; what follows the shared part is looked at item by item.
   */
  static sharedPrefix(
    held: HeldList | undefined,
    length: number,
    items?: readonly unknown[],
    hashes?: readonly string[],
    trust = false,
  ): number {
    const objects = held?.objects;
    const knowns = held?.knowns;
    if (objects === undefined || knowns === undefined) return 0;
    const end = Math.min(held!.length, length);
    let i = 0;
    if (trust && items !== undefined) {
      for (; i < end; i++) if (items[i] !== objects[i] || knowns[i] === undefined) break;
      return i;
    }
    for (; i < end; i++) {
      const known = knowns[i];
      if (known === undefined) break;
      const object = objects[i] as object;
      if (items !== undefined ? items[i] !== object : hashes![i] !== known.hash) break;
      if (!unchanged(object, known)) break;
    }
    return i;
  }

  /** The decoded item under `hash` when this process has it unchanged; `MISS` otherwise. */
  decodedItem(hash: string): unknown {
    if (!this.decoded.has(hash)) return MISS;
    const item = this.decoded.get(hash);
    return this.hashOf(item) === hash || typeof item !== 'object' || item === null ? item : MISS;
  }

  /** A (channel, version)'s list as held before (shared: callers must not change it). */
  list(key: string): HeldList | undefined {
    return this.lists.get(key);
  }

  rememberList(key: string, held: HeldList): void {
    this.lists.delete(key);
    this.lists.set(key, held);
    if (this.lists.size > LIST_CACHE) this.lists.delete(this.lists.keys().next().value!);
  }

  clear(): void {
    this.decoded.clear();
    this.lists.clear();
  }
}

export const MISS = Symbol('not decoded');

/** The message fields compared by name, `lc_kwargs` aside (see Known). */
const MESSAGE_FIELDS: ReadonlySet<string> = new Set([
  'content',
  'id',
  'name',
  'tool_calls',
  'tool_call_id',
  'additional_kwargs',
  'response_metadata',
  'usage_metadata',
  'invalid_tool_calls',
  'status',
  'artifact',
]);

interface MessageLike {
  lc_kwargs: Record<string, unknown>;
  [field: string]: unknown;
}

function isPlainMessage(item: object): item is MessageLike {
  const kwargs = (item as { lc_kwargs?: unknown }).lc_kwargs;
  if (typeof kwargs !== 'object' || kwargs === null || Array.isArray(kwargs)) return false;
  for (const key of Object.keys(kwargs)) if (!MESSAGE_FIELDS.has(key)) return false;
  return true;
}

function unchanged(item: object, known: Known): boolean {
  if (known instanceof MessagePrint) return known.matches(item as MessageLike);
  const record = item as Record<string, unknown>;
  let count = 0;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    if (count >= known.keys.length || known.keys[count] !== key) return false;
    if (record[key] !== known.values[count]) return false;
    count += 1;
  }
  return count === known.keys.length;
}

/**
 * Whether a write's value — a list, one item, or either wrapped in LangGraph's `Overwrite` — has
 * an item this process holds.
 */
export function writesBack(items: ItemCache, value: unknown): boolean {
  let inner = value;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    if ('__overwrite__' in record) inner = record.__overwrite__;
    else if (record.type === '__overwrite__' && 'value' in record) inner = record.value;
  }
  return Array.isArray(inner) ? inner.some((item) => items.holds(item)) : items.holds(inner);
}
