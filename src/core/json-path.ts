/** JSON paths as errors name them: `$`-rooted, `.key`, `["odd key"]` or `[3]`. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Appends one segment to a JSON path: `.key`, `["odd key"]` or `[3]`. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** A step of an iterative walk: where it came from, and under which key. */
export interface PathLink {
  parent: PathLink | null;
  key: string | number | null;
}

/** The `$`-rooted path of a walk's step, e.g. `$.a[2].b`. */
export function pathOf(frame: PathLink, root: string): string {
  const keys: (string | number)[] = [];
  for (let f: PathLink | null = frame; f !== null && f.key !== null; f = f.parent) {
    keys.push(f.key);
  }
  let out = root;
  for (let i = keys.length - 1; i >= 0; i--) out = childPath(out, keys[i]!);
  return out;
}
