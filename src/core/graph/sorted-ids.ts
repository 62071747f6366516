/**
 * Helpers over sorted lists of node ids, as parents lists and the frontier are kept: sorting with
 * the default sort, membership by binary search, and advancing the frontier past new parents.
 */

export function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True for a list in ascending code-unit order without repeats, as `sortUnique` leaves it. */
export function isSortedUnique(ids: readonly string[]): boolean {
  for (let i = 1; i < ids.length; i++)
    if ((ids[i - 1] as string) >= (ids[i] as string)) return false;
  return true;
}

/**
 * Sorts `ids` with the default sort and removes duplicates, in place, keeping `seqs` (the
 * sequence of each id, same order) aligned.
 */
export function sortUnique(ids: string[], seqs: number[]): void {
  const n = ids.length;
  if (n < 2) return;
  // Insertion sort of the two aligned lists: parents lists are short.
  for (let i = 1; i < n; i++) {
    const id = ids[i] as string;
    const seq = seqs[i] as number;
    let j = i - 1;
    while (j >= 0 && (ids[j] as string) > id) {
      ids[j + 1] = ids[j] as string;
      seqs[j + 1] = seqs[j] as number;
      j--;
    }
    ids[j + 1] = id;
    seqs[j + 1] = seq;
  }
  let kept = 1;
  for (let i = 1; i < n; i++) {
    if (ids[i] === ids[kept - 1]) continue;
    ids[kept] = ids[i] as string;
    seqs[kept] = seqs[i] as number;
    kept++;
  }
  ids.length = kept;
  seqs.length = kept;
}

/** The frontier without `parents` (sorted, unique), plus `id` at the end. O(frontier · log parents). */
export function advanceFrontier(
  frontier: readonly string[],
  parents: string[],
  id: string,
): string[] {
  let kept = 0;
  for (let i = 0; i < frontier.length; i++) {
    if (!containsSorted(parents, frontier[i] as string)) kept++;
  }
  // Sized exactly: the frontier is kept, frozen, by the new graph value.
  const next = new Array<string>(kept + 1);
  let at = 0;
  for (let i = 0; i < frontier.length; i++) {
    const head = frontier[i] as string;
    if (!containsSorted(parents, head)) next[at++] = head;
  }
  next[at] = id;
  return next;
}

function containsSorted(sorted: readonly string[], value: string): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const probe = sorted[mid] as string;
    if (probe === value) return true;
    if (probe < value) lo = mid + 1;
    else hi = mid;
  }
  return false;
}
