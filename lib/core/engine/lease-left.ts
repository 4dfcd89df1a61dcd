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

/**
 * How long a read lock has left: the longest lease of its readers' PTTLs (-2: that reader's key
 * is gone), a key without expiry (-1) counting as the longest; undefined when every key is gone.
 */
export function longestLease(pttls: readonly number[]): number | undefined {
  let longest: number | undefined;
  for (const pttl of pttls) {
    if (pttl === -1) return -1;
    if (pttl >= 0 && (longest === undefined || pttl > longest)) longest = pttl;
  }
  return longest;
}
