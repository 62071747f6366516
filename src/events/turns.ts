/**
 * Turns for the streams of one hub: each turn of the event loop wakes one waiting stream, whose
 * slice then runs. With a turn per stream instead, sixteen replays would run sixteen slices
 * between two polls for I/O, and every other request would wait for all of them at each of its
 * hops (read, execute, write). First come, first served, so no stream starves.
 */
export function createTurns(): () => Promise<void> {
  const waiting: Array<() => void> = [];
  let releasing = false;
  const releaseOne = () => {
    const next = waiting.shift();
    if (waiting.length > 0) setImmediate(releaseOne);
    else releasing = false;
    next?.();
  };
  return () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (!releasing) {
        releasing = true;
        setImmediate(releaseOne);
      }
    });
}
