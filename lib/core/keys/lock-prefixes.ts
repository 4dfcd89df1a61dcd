/**
 * The full key prefixes (the client's own prefix, then the module's `keyPrefix`) under which the
 * lock modules of this process keep their keys, while they run: a `FencedRedis` whose client
 * prefix is one of them would keep its token hashes (`<prefix>{<tag>}:fence`) under the names of
 * those locks' fencing counters (`<prefix>{<key>}:fence`), a string INCR'd by every acquisition.
 * Process-local: a lock module of another process is not seen (docs/fencing.md says so).
 */
const inUse = new Map<string, number>();

/** A lock module runs under `prefix`; the returned function says it stopped. */
export function claimLockPrefix(prefix: string): () => void {
  inUse.set(prefix, (inUse.get(prefix) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (inUse.get(prefix) ?? 1) - 1;
    if (left > 0) inUse.set(prefix, left);
    else inUse.delete(prefix);
  };
}

export function isLockPrefix(prefix: string): boolean {
  return inUse.has(prefix);
}

/**
 * The running lock module prefix under which `name` (a full Redis key name, client prefix
 * included) would be one of its locks' keys (`<prefix>{<key>}...`), or undefined.
 */
export function lockPrefixOf(name: string): string | undefined {
  for (const prefix of inUse.keys()) if (name.startsWith(prefix + '{')) return prefix;
  return undefined;
}
