/**
 * What `inspect()` reports of a lock key's PTTL: the lease left, 0 for a key that expired between
 * the reads (-2), and -1 as Redis says it for a key with no expiry (written by something other
 * than this library, or `PERSIST`ed), which never frees on its own: not "expiring now".
 */
export function leaseLeft(pttl: number): number {
  return pttl === -1 ? -1 : Math.max(0, pttl);
}

/** The shortest lease of several PTTLs, a key without expiry (-1) counting as the longest. */
export function shortestPttl(pttls: readonly number[]): number {
  let shortest = Infinity;
  for (const pttl of pttls) if (pttl !== -1 && pttl < shortest) shortest = pttl;
  return shortest === Infinity ? (pttls.length > 0 ? -1 : -2) : shortest;
}
