/** How many entries of an ascending list are ≤ limit. O(log n), O(1) when all are. */
export function countAtMost(list: readonly number[], limit: number): number {
  const last = list[list.length - 1];
  if (last === undefined || last <= limit) return list.length;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! <= limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The last entry ≤ limit of an ascending list. */
export function lastAtMost(list: readonly number[] | undefined, limit: number): number | undefined {
  if (list === undefined) return undefined;
  const n = countAtMost(list, limit);
  return n > 0 ? list[n - 1] : undefined;
}
