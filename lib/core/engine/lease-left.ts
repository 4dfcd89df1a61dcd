/**
 * What `inspect()` reports of a lock key's PTTL: the lease left, 0 for a key that expired between
 * the reads (-2), and -1 as Redis says it for a key with no expiry (written by something other
 * than this library, or `PERSIST`ed), which never frees on its own: not "expiring now".
 */
export function leaseLeft(pttl: number): number {
  return pttl === -1 ? -1 : Math.max(0, pttl);
}

/**
 * Quorum mode: the lease of a lock from the PTTLs of its copies on the masters. It is held until
 * fewer than `majority` copies are left: the `majority`-th longest (a key without expiry, -1,
 * counting as the longest, one gone between the reads, -2, as the shortest), or the shortest with
 * fewer copies than that. -2 without copies.
 */
export function majorityPttl(pttls: readonly number[], majority: number): number {
  if (pttls.length === 0) return -2;
  const longestFirst = pttls.map((pttl) => (pttl === -1 ? Infinity : pttl)).sort((a, b) => b - a);
  const lease = longestFirst[Math.min(majority, longestFirst.length) - 1]!;
  return lease === Infinity ? -1 : lease;
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
