/**
 * The messages of an inference node written from OpenTelemetry GenAI spans (docs/opentelemetry.md):
 * its `input` and `output` in the conventions' shape, `{role, parts: [{type, …}]}`, as a
 * conversation to read rather than JSON. Anything else renders nothing (the payload shows anyway).
 */
interface Part {
  type?: unknown;
  content?: unknown;
  name?: unknown;
  arguments?: unknown;
  response?: unknown;
}
interface Message {
  role?: unknown;
  parts?: unknown;
}

const isMessages = (value: unknown): value is Message[] =>
  Array.isArray(value) &&
  value.length > 0 &&
  value.every((m) => typeof m === 'object' && m !== null && Array.isArray((m as Message).parts));

const show = (value: unknown): string =>
  typeof value === 'string' ? value : JSON.stringify(value);

function partText(part: Part): string {
  if (part.type === 'text') return show(part.content);
  if (part.type === 'tool_call') return `calls ${show(part.name)}(${show(part.arguments ?? '')})`;
  if (part.type === 'tool_call_response') return `tool result: ${show(part.response)}`;
  return show(part);
}

function List({ messages, label }: { messages: Message[]; label: string }) {
  return (
    <ol class="messages" aria-label={label}>
      {messages.map((m, i) => (
        <li key={i} data-role={show(m.role)}>
          <strong>{show(m.role)}</strong> {(m.parts as Part[]).map((p) => partText(p)).join(' ')}
        </li>
      ))}
    </ol>
  );
}

export function Messages({ payload }: { payload: unknown }) {
  if (typeof payload !== 'object' || payload === null) return null;
  const { input, output } = payload as { input?: unknown; output?: unknown };
  if (!isMessages(input) && !isMessages(output)) return null;
  return (
    <div data-messages>
      <h3>Messages</h3>
      {isMessages(input) && <List messages={input} label="Input messages" />}
      {isMessages(output) && <List messages={output} label="Output messages" />}
    </div>
  );
}
