import { useQuery } from '@urql/preact';
import type { ComponentChildren } from 'preact';
import { ConsoleThreadPickerDocument } from '../generated/graphql';

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

/**
 * A moment as people read it: the date and time (the date left out only for today), and how far
 * from now it is. A time alone misleads: an approval that expires at "12:05 AM" tomorrow looks
 * expired tonight.
 */
export function dateTime(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return '';
  const at = new Date(iso);
  const sameDay = at.toDateString() === now.toDateString();
  const clock = CLOCK.format(at);
  if (sameDay) return `today ${clock}`;
  const date = (at.getFullYear() === now.getFullYear() ? DAY : DAY_AND_YEAR).format(at);
  return `${date} ${clock}`;
}

// Made once: `toLocaleTimeString(locale, options)` builds a formatter at every call, which made
// the page's times most of what a live update cost (every time on the page is drawn again).
const CLOCK = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const DAY = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const DAY_AND_YEAR = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
});

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });

/** How far `iso` is from now: "3 min ago", "in 23 hr". */
export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') {
      return RELATIVE.format(Math.trunc(seconds / size), unit);
    }
  }
  return '';
}

/** A `<time>` showing the date and time, with the distance from now beside it. */
export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return null;
  return (
    <time dateTime={iso} title={new Date(iso).toISOString()}>
      {dateTime(iso)} <span class="relative">({relativeTime(iso)})</span>
    </time>
  );
}

/**
 * A thread id field that offers the most recently active threads to pick from (a native
 * datalist: typed ids still work, and the browser filters as one types).
 */
export function ThreadPicker({
  label,
  value,
  onInput,
}: {
  label: string;
  value: string;
  onInput: (value: string) => void;
}) {
  const [threads] = useQuery({ query: ConsoleThreadPickerDocument, variables: { first: 100 } });
  const id = `picker-${label.replace(/[^A-Za-z0-9]/g, '-').toLowerCase()}`;
  return (
    <label>
      {label}{' '}
      <input
        list={`${id}-list`}
        value={value}
        autocomplete="off"
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <datalist id={`${id}-list`} data-picker={label}>
        {threads.data?.threads.edges.map(({ node }) => (
          <option key={node.id} value={node.id} />
        ))}
      </datalist>
    </label>
  );
}

/** "Within" choices of a list's time filter: how far back its moment may be. */
const WINDOWS: Record<string, number> = {
  'the last hour': 3_600_000,
  'the last day': 86_400_000,
  'the last week': 7 * 86_400_000,
};

/** A chosen time window: its label, and the moment it starts (unset for any time). */
export interface Within {
  label: string;
  after?: string;
}

/** A labelled select of a list filter: `options` as [value, text], in the order shown. */
/** A list's order, as the API's ThreadOrder and RunOrder take it: a field and a direction. */
export type Sort = `${'UPDATED_AT' | 'CREATED_AT'} ${'DESC' | 'ASC'}`;

export const orderOf = (sort: Sort) => {
  const [field, direction] = sort.split(' ') as ['UPDATED_AT' | 'CREATED_AT', 'DESC' | 'ASC'];
  return { field, direction };
};

/** The four orders of a list, named by what its two times mean there. */
export function sortOptions(
  updated: string,
  created: string,
): ReadonlyArray<readonly [Sort, string]> {
  return [
    ['UPDATED_AT DESC', `${updated}, newest first`],
    ['UPDATED_AT ASC', `${updated}, oldest first`],
    ['CREATED_AT DESC', `${created}, newest first`],
    ['CREATED_AT ASC', `${created}, oldest first`],
  ];
}

export function FilterSelect<T extends string>({
  label,
  filter,
  value,
  options,
  onChange,
}: {
  label: string;
  filter: string;
  value: T;
  options: ReadonlyArray<readonly [T, string]>;
  onChange: (value: T) => void;
}) {
  return (
    <label>
      {label}{' '}
      <select
        value={value}
        data-filter={filter}
        onChange={(e) => onChange(e.currentTarget.value as T)}
      >
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A select of time windows (any time, the last hour, day, week) for a list's filter. */
export function WithinSelect({
  label,
  filter,
  value,
  onChange,
}: {
  label: string;
  filter: string;
  value: Within;
  onChange: (value: Within) => void;
}) {
  return (
    <label>
      {label}{' '}
      <select
        value={value.label}
        data-filter={filter}
        onChange={(e) => {
          const chosen = e.currentTarget.value;
          const ms = WINDOWS[chosen];
          // The moment is fixed when chosen: a filter that moved with every render would never
          // settle.
          onChange(
            ms === undefined
              ? { label: '' }
              : { label: chosen, after: new Date(Date.now() - ms).toISOString() },
          );
        }}
      >
        <option value="">any time</option>
        {Object.keys(WINDOWS).map((w) => (
          <option key={w} value={w}>
            {w}
          </option>
        ))}
      </select>
    </label>
  );
}
