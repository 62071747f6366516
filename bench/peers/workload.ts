/**
 * The peer benchmark's workload: a deterministic, seeded agent conversation of N turns. Each turn
 * is a user goal, one or two inferences (each asking for one or two tool calls), the tool results
 * (1–4 KB of file or search output each), a final answer and, every few turns, a memory write.
 * Both sides are fed exactly these values; `normalize*` in `content.ts` maps what each side reads
 * back onto `ConversationView` so the two can be compared.
 */

export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, string>;
}

export interface Inference {
  text: string;
  toolCalls: ToolCall[];
}

export interface ToolResult {
  toolCallId: string;
  content: string;
}

export interface MemoryWrite {
  key: string;
  content: string;
}

/** One step of a turn, in the order it happens. */
export type Step =
  | { type: 'inference'; inference: Inference }
  | { type: 'tool_result'; result: ToolResult };

export interface Turn {
  /** 1-based turn number. */
  n: number;
  goal: string;
  steps: Step[];
  answer: string;
  memory?: MemoryWrite;
}

/** A message as both sides read it back: the unit of the content check. */
export type ViewMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

export interface ConversationView {
  messages: ViewMessage[];
  /** Latest content per memory key. */
  memory: Record<string, string>;
}

/** A memory write lands on every MEMORY_EVERY-th turn. */
export const MEMORY_EVERY = 7;

const WORDS = [
  'agent',
  'config',
  'parser',
  'request',
  'budget',
  'schema',
  'retry',
  'thread',
  'cache',
  'token',
  'module',
  'handler',
  'report',
  'error',
  'column',
  'deploy',
  'metric',
  'index',
  'fixture',
  'timeout',
  'branch',
  'commit',
  'invoice',
  'customer',
  'latency',
  'queue',
  'vector',
  'the',
  'a',
  'of',
  'to',
  'in',
  'for',
  'with',
  'and',
  'is',
  'on',
  'that',
  'this',
  'from',
];
const TOOLS = ['read_file', 'search_code', 'run_tests', 'query_db', 'http_get', 'list_dir'];
const FILES = ['src/app.ts', 'src/db/schema.sql', 'lib/retry.py', 'README.md', 'api/routes.go'];
const MEMORY_KEYS = ['user-preference', 'project-stack', 'deploy-target', 'style', 'owner'];

/** A small LCG: the same seed always gives the same conversation. */
function lcg(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

function generator(seed: number) {
  const rand = lcg(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const sentence = (words: number) => {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(pick(WORDS));
    return `${out.join(' ')}.`;
  };
  const prose = (bytes: number) => {
    let text = '';
    while (text.length < bytes) text += `${sentence(int(6, 16))} `;
    return text.slice(0, bytes).trimEnd();
  };
  /** Tool output: numbered source-like lines, `bytes` long. */
  const output = (bytes: number) => {
    const lines: string[] = [];
    let size = 0;
    for (let line = 1; size < bytes; line++) {
      const text = `${String(line).padStart(4)}  ${pick(['const', 'let', 'if', 'return', '//'])} ${sentence(int(3, 10))}`;
      lines.push(text);
      size += text.length + 1;
    }
    return lines.join('\n').slice(0, bytes);
  };
  return { int, pick, prose, output };
}

/** The first `count` turns of the conversation for `seed` (a prefix of any longer one). */
export function generateWorkload(count: number, seed = 7): Turn[] {
  const g = generator(seed);
  const turns: Turn[] = [];
  for (let n = 1; n <= count; n++) {
    const steps: Step[] = [];
    const inferences = g.int(1, 2);
    for (let i = 1; i <= inferences; i++) {
      const calls = g.int(1, 2);
      const toolCalls: ToolCall[] = [];
      for (let c = 1; c <= calls; c++) {
        const name = g.pick(TOOLS);
        toolCalls.push({
          id: `call_${n}_${i}_${c}`,
          name,
          args: name === 'read_file' ? { path: g.pick(FILES) } : { query: g.prose(g.int(20, 60)) },
        });
      }
      steps.push({ type: 'inference', inference: { text: g.prose(g.int(150, 450)), toolCalls } });
      for (const call of toolCalls) {
        steps.push({
          type: 'tool_result',
          result: { toolCallId: call.id, content: g.output(g.int(1024, 4096)) },
        });
      }
    }
    const turn: Turn = {
      n,
      goal: `Turn ${n}: ${g.prose(g.int(80, 260))}`,
      steps,
      answer: g.prose(g.int(200, 700)),
    };
    if (n % MEMORY_EVERY === 0) {
      turn.memory = { key: g.pick(MEMORY_KEYS), content: g.prose(g.int(40, 160)) };
    }
    turns.push(turn);
  }
  return turns;
}

/** The conversation as it should read after `turns` (the expected value of the content check). */
export function expectedView(turns: readonly Turn[]): ConversationView {
  const messages: ViewMessage[] = [];
  const memory: Record<string, string> = {};
  for (const turn of turns) {
    messages.push({ role: 'user', content: turn.goal });
    for (const step of turn.steps) {
      if (step.type === 'inference') {
        messages.push({
          role: 'assistant',
          content: step.inference.text,
          toolCalls: step.inference.toolCalls,
        });
      } else {
        messages.push({ role: 'tool', ...step.result });
      }
    }
    messages.push({ role: 'assistant', content: turn.answer, toolCalls: [] });
    if (turn.memory !== undefined) memory[turn.memory.key] = turn.memory.content;
  }
  return { messages, memory };
}

/** Payload bytes of a turn (its texts and tool arguments), for bytes-per-turn context. */
export function turnContentBytes(turn: Turn): number {
  let bytes = turn.goal.length + turn.answer.length;
  for (const step of turn.steps) {
    bytes +=
      step.type === 'inference'
        ? step.inference.text.length + JSON.stringify(step.inference.toolCalls).length
        : step.result.content.length;
  }
  if (turn.memory !== undefined) bytes += turn.memory.content.length;
  return bytes;
}
