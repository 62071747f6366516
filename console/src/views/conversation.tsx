/**
 * A thread as a conversation: its message nodes (goal = the user, inference and answer = the
 * assistant, tool calls and results, system prompts) in order, with a line where each run began, their text rendered as Markdown,
 * tool arguments and structured results folded as JSON, token usage per step. The last PAGE
 * messages first, earlier ones on demand, new ones live. Each message selects its node in the
 * causal graph beside it.
 *
 * Markdown is rendered by markdown-it with raw HTML off (a message's HTML shows as text) and its
 * default link check (no `javascript:` or `data:` links); the console's CSP forbids inline script
 * besides.
 */
import { useClient } from '@urql/preact';
import MarkdownIt from 'markdown-it';
import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  ConsoleConversationDocument,
  ConsoleMessageAppendedDocument,
  type ConsoleMessageFragment,
  type NodeKind,
} from '../generated/graphql';
import { useFeed } from '../live';
import { Json, When } from './common';
import { Redacted, type RedactedById } from './redaction';

const withRedaction = (m: ConsoleMessageFragment, redacted: RedactedById) => {
  const note = redacted.get(m.id);
  return note === undefined || m.redaction ? m : { ...m, redaction: note, payload: null };
};

const PAGE = 50;
const MESSAGE_KINDS: ReadonlySet<NodeKind> = new Set<NodeKind>([
  'GOAL',
  'SYSTEM',
  'INFERENCE',
  'TOOL_CALL',
  'TOOL_RESULT',
  'ANSWER',
]);

const markdown = new MarkdownIt({ html: false, linkify: false, breaks: true });

type Payload = Record<string, unknown>;
const asRecord = (v: unknown): Payload =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Payload) : {};

/** A message's text: a string, or the text parts of LangChain's content blocks. */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.flatMap((block) => {
    const b = asRecord(block);
    return b.type === 'text' && typeof b.text === 'string' ? [b.text] : [];
  });
  return parts.length === content.length && parts.length > 0 ? parts.join('\n\n') : undefined;
}

/** Text that holds JSON reads better folded as JSON. */
function jsonIn(text: string): unknown {
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

function Markdown({ text }: { text: string }) {
  // markdown-it with html off escapes the message's own HTML (see the header).
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: markdown.render(text) }} />;
}

function Folded({ label, value }: { label: string; value: unknown }) {
  return (
    <details class="folded">
      <summary>{label}</summary>
      <Json value={value} />
    </details>
  );
}

/** The parts of one type in OpenTelemetry GenAI messages (`{role, parts}`: opentelemetry.md). */
function genAiParts(messages: unknown, type: string): Payload[] {
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((m) => {
    const parts = asRecord(m).parts;
    return Array.isArray(parts) ? parts.map(asRecord).filter((p) => p.type === type) : [];
  });
}

/** The text an inference node written from OpenTelemetry spans answered with. */
function genAiText(output: unknown): string | undefined {
  const texts = genAiParts(output, 'text').flatMap((p) =>
    typeof p.content === 'string' ? [p.content] : [],
  );
  return texts.length > 0 ? texts.join('\n\n') : undefined;
}

/** The tools a message calls: LangChain's `toolCalls`, or the GenAI output's tool_call parts. */
function callsOf(payload: Payload): unknown[] {
  if (Array.isArray(payload.toolCalls)) return payload.toolCalls;
  return genAiParts(payload.output, 'tool_call');
}

/** The body of a message: its text as Markdown, JSON folded, anything else as JSON. */
function Body({ payload }: { payload: Payload }) {
  const content =
    'content' in payload
      ? payload.content
      : (payload.text ?? genAiText(payload.output) ?? payload.goal ?? payload.result);
  const text = textOf(content);
  if (text !== undefined) {
    const json = jsonIn(text);
    return json === undefined ? <Markdown text={text} /> : <Folded label="JSON" value={json} />;
  }
  return <Folded label="payload" value={content ?? payload} />;
}

const ROLES: Record<string, string> = {
  GOAL: 'User',
  SYSTEM: 'System',
  INFERENCE: 'Assistant',
  ANSWER: 'Assistant',
  TOOL_CALL: 'Tool call',
  TOOL_RESULT: 'Tool result',
};

/** Tokens (and cost) a step used: the node's usage, or the usage LangChain put on the message. */
function Usage({ node, payload }: { node: ConsoleMessageFragment; payload: Payload }) {
  const u = asRecord(node.usage ?? payload.usage);
  const input = u.inputTokens ?? u.input_tokens;
  const output = u.outputTokens ?? u.output_tokens;
  if (typeof input !== 'number' && typeof output !== 'number') return null;
  const cost = typeof u.costUsd === 'number' ? ` · $${u.costUsd.toFixed(4)}` : '';
  return (
    <span class="usage" data-usage>
      {Number(input ?? 0).toLocaleString()} in · {Number(output ?? 0).toLocaleString()} out
      {cost}
    </span>
  );
}

/** A run's goal node: where a run began, not something the user said. */
const runGoal = (node: ConsoleMessageFragment) => {
  const p = asRecord(node.payload);
  return node.kind === 'GOAL' && typeof p.goal === 'string' && typeof p.runId === 'string'
    ? { goal: p.goal, runId: p.runId }
    : undefined;
};

function RunStart({
  node,
  run,
}: {
  node: ConsoleMessageFragment;
  run: { goal: string; runId: string };
}) {
  return (
    <li class="run-start" data-run-start={run.runId} data-node-id={node.id}>
      Run <code>{run.runId.slice(0, 8)}</code> started: {run.goal} <When iso={node.createdAt} />
    </li>
  );
}

/**
 * One message, drawn again only when its node or selection changes: a live append re-renders the
 * list, and rendering every message's Markdown again at each one held the page's main thread
 * (live events queued behind it for seconds on a conversation of a few hundred messages).
 */
const Message = memo(function Message({
  node,
  selected,
  onSelect,
}: {
  node: ConsoleMessageFragment;
  selected: boolean;
  onSelect: (id: string) => void;
}) {
  const payload = asRecord(node.payload);
  const role = ROLES[node.kind] ?? node.kind;
  const name = typeof payload.name === 'string' ? payload.name : undefined;
  return (
    <li
      class={`message kind-${node.kind.toLowerCase()}${selected ? ' selected' : ''}`}
      data-message-kind={node.kind}
      data-node-id={node.id}
    >
      <header>
        <strong>{role}</strong>
        {name !== undefined && <span class="name"> · {name}</span>} <When iso={node.createdAt} />{' '}
        <Usage node={node} payload={payload} />{' '}
        <button type="button" class="link" onClick={() => onSelect(node.id)}>
          in the graph
        </button>
      </header>
      {node.redaction ? (
        <Redacted redaction={node.redaction} />
      ) : node.kind === 'TOOL_CALL' ? (
        <Folded
          label={`${String(payload.name ?? 'call')}(…)`}
          value={payload.args ?? payload.arguments ?? payload}
        />
      ) : (
        <Body payload={payload} />
      )}
      {callsOf(payload).length > 0 && (
        <p class="calls">
          Calls:{' '}
          {callsOf(payload)
            .map((c) => String(asRecord(c).name ?? '?'))
            .join(', ')}
        </p>
      )}
    </li>
  );
});

/**
 * The conversation of thread `threadId`, or nothing when it has no message nodes. `onPresence`
 * hears whether it has any (the thread page then lays it out beside the graph).
 */
export function Conversation({
  threadId,
  selected,
  onSelect,
  onPresence,
  redacted,
}: {
  threadId: string;
  selected: string | null;
  onSelect: (id: string) => void;
  onPresence: (has: boolean) => void;
  /** Nodes redacted since the page loaded: their messages, read before, show as redacted. */
  redacted: RedactedById;
}) {
  const client = useClient();
  const [messages, setMessages] = useState<ConsoleMessageFragment[] | undefined>(undefined);
  const [earlier, setEarlier] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const last = useRef(-1);

  const load = async (before: string | null) => {
    const result = await client
      .query(
        ConsoleConversationDocument,
        { id: threadId, last: PAGE, ...(before === null ? {} : { before }) },
        { requestPolicy: 'network-only' },
      )
      .toPromise();
    if (result.error) throw result.error;
    const nodes = result.data?.thread?.nodes;
    const page = nodes?.edges.map((e) => e.node) ?? [];
    setEarlier(nodes?.pageInfo.hasPreviousPage ? (nodes.pageInfo.startCursor ?? null) : null);
    return page;
  };

  useEffect(() => {
    setMessages(undefined);
    last.current = -1;
    load(null)
      .then((page) => {
        last.current = Math.max(-1, ...page.map((m) => m.sequence));
        setMessages(page);
      })
      .catch((e: unknown) => setError(String(e)));
  }, [client, threadId]);

  useFeed(
    ConsoleMessageAppendedDocument,
    () => (messages === undefined ? null : { threadId, afterSequence: last.current }),
    (data) => {
      const node = data.nodeAppended;
      if (node.sequence <= last.current) return;
      last.current = node.sequence;
      if (MESSAGE_KINDS.has(node.kind)) setMessages((list) => [...(list ?? []), node]);
    },
    [threadId, messages === undefined],
  );

  const has = messages !== undefined && messages.length > 0;
  useEffect(() => onPresence(has), [has]);
  // A selected message scrolls into view (a click in the graph finds its message).
  useEffect(() => {
    if (selected === null) return;
    document
      .querySelector(`.messages [data-node-id="${CSS.escape(selected)}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  if (error !== null) return <p class="error">The conversation could not be read: {error}</p>;
  if (messages === undefined) return <p role="status">Loading the conversation…</p>;
  if (messages.length === 0) return null;
  return (
    <section class="panel conversation" aria-label="Conversation">
      <h2>Conversation</h2>
      {earlier !== null && (
        <button
          type="button"
          data-action="earlier-messages"
          onClick={() =>
            load(earlier)
              .then((page) => setMessages((list) => [...page, ...(list ?? [])]))
              .catch((e: unknown) => setError(String(e)))
          }
        >
          Show earlier messages
        </button>
      )}
      <ol class="messages" aria-live="polite" aria-relevant="additions">
        {messages.map((m) => {
          const run = runGoal(m);
          return run !== undefined ? (
            <RunStart key={m.id} node={m} run={run} />
          ) : (
            <Message
              key={m.id}
              node={withRedaction(m, redacted)}
              selected={m.id === selected}
              onSelect={onSelect}
            />
          );
        })}
      </ol>
    </section>
  );
}
