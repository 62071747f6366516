/**
 * payloadPreview: the one line a graph label shows for a node — the field that says what the
 * node is about, identifiers left out, cut with an ellipsis, nothing for a tombstone.
 */
import { describe, expect, it } from 'vitest';
import { payloadPreview } from '../../src/core/graph/index.js';
import { tombstone } from '../../src/core/graph/tombstone.js';

describe('payloadPreview', () => {
  it('reads a message by its content, not its ids or role', () => {
    expect(
      payloadPreview({ channel: 'messages', role: 'human', messageId: 'm-1', content: 'Hi there' }),
    ).toBe('Hi there');
    expect(
      payloadPreview({
        role: 'ai',
        content: [
          { type: 'text', text: 'Part one' },
          { type: 'text', text: 'two' },
        ],
      }),
    ).toBe('Part one two');
  });

  it('reads a goal, an answer, a tool call as name(args)', () => {
    expect(payloadPreview({ goal: 'Book a table for two' })).toBe('Book a table for two');
    expect(payloadPreview({ answer: 'Done.', usage: { tokens: 4 } })).toBe('Done.');
    expect(
      payloadPreview({ name: 'search', args: { q: 'weather', days: 3 }, toolCallId: 'c1' }),
    ).toBe('search(q: weather, days: 3)');
  });

  it('falls back to the strings and numbers in document order', () => {
    expect(payloadPreview({ city: 'Oslo', temperature: 4, id: 'x' })).toBe('Oslo 4');
    expect(payloadPreview('plain text')).toBe('plain text');
    expect(payloadPreview(42)).toBe('42');
  });

  it('collapses whitespace and cuts at maxLength with an ellipsis, never inside a surrogate pair', () => {
    expect(payloadPreview({ content: '  a\n\n b\t c  ' })).toBe('a b c');
    const long = payloadPreview({ content: 'word '.repeat(100) }, 20)!;
    expect(long.length).toBeLessThanOrEqual(20);
    expect(long.endsWith('…')).toBe(true);
    const emoji = payloadPreview({ content: `${'a'.repeat(8)}😀😀😀` }, 10)!;
    expect(emoji).toBe('aaaaaaaa…');
    expect(payloadPreview({ content: 'x'.repeat(2000) }, 10_000)!.length).toBe(500);
  });

  it('is null for no text and for a redacted node', () => {
    expect(payloadPreview({})).toBeNull();
    expect(payloadPreview(null)).toBeNull();
    expect(payloadPreview({ content: '   ' })).toBeNull();
    expect(
      payloadPreview(tombstone({ reason: 'gdpr', redactedAt: '2026-01-01T00:00:00Z' })),
    ).toBeNull();
  });

  it('reads no further into a large, deep payload than it needs', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(payloadPreview(deep as never)).toBe('bottom');
    const wide = { content: Array.from({ length: 200_000 }, (_, i) => `item${i}`) };
    expect(payloadPreview(wide, 12)).toBe('item0 item1…');
  });
});
