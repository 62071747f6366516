import type { ComponentChildren } from 'preact';

export function Json({ value }: { value: unknown }) {
  // Focusable: a long value scrolls (max-height), and a keyboard must be able to scroll it.
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region needs a tab stop
    <pre class="json" tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="panel" aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export function Meter({
  label,
  value,
  max,
}: {
  label: string;
  value: number;
  max?: number | null;
}) {
  if (max === undefined || max === null || max <= 0) {
    return (
      <div class="meter">
        <span>{label}</span> <span>{value.toLocaleString()} (no limit)</span>
      </div>
    );
  }
  const over = value >= max;
  return (
    <div class="meter">
      <label>
        {label}: {value.toLocaleString()} of {max.toLocaleString()}
        <meter min={0} max={max} value={value} high={max * 0.8} class={over ? 'over' : ''} />
      </label>
    </div>
  );
}

export function time(iso: string | null | undefined): string {
  if (!iso) return '';
  return new Date(iso).toLocaleTimeString();
}
