/**
 * The board's `allowedHosts`: which `Host` headers it answers. A page of another site that
 * reached the board by DNS rebinding sends its own host name, which matches its own `Origin`, so
 * only a list of the names the board is really served under tells it apart.
 */

/** Longest host name (RFC 1035), and so the longest entry. */
const MAX_HOST_LENGTH = 253;

/**
 * The host name of a `Host` header, lowercased, without its port or a trailing dot (`[::1]` keeps
 * its brackets), or
 * `undefined` for a header no browser sends (empty, a path, credentials, a second value).
 */
export function hostNameOf(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string' || header.length === 0 || header.length > MAX_HOST_LENGTH + 7) return undefined;
  if (/[\s/?#@\\]/.test(header)) return undefined;
  try {
    // A fully qualified name's trailing dot (`board.internal.`) names the same host.
    return new URL(`http://${header}`).hostname.replace(/\.$/, '') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `header` names an allowed host: an entry is a host name (exactly), or `.example.com`
 * for that domain and every name under it. `allowed` holds checked, lowercased entries.
 */
export function hostAllowed(header: string | string[] | undefined, allowed: readonly string[]): boolean {
  const host = hostNameOf(header);
  if (host === undefined) return false;
  return allowed.some((entry) => (entry.startsWith('.') ? host === entry.slice(1) || host.endsWith(entry) : host === entry));
}

/**
 * What is wrong with an `allowedHosts` entry (to end "expected ..."), or `undefined`: a host
 * name or IP address without scheme, port or path (an IPv6 address in brackets), optionally
 * led by `.` for a domain and its subdomains.
 */
export function allowedHostProblem(entry: unknown): string | undefined {
  const expected = 'a host name such as "admin.example.com", ".example.com" (a domain and its subdomains) or "[::1]", without scheme, port or path';
  if (typeof entry !== 'string' || entry.length === 0 || entry.length > MAX_HOST_LENGTH) return expected;
  const name = entry.startsWith('.') ? entry.slice(1) : entry;
  if (name.length === 0 || name.includes(':') !== name.startsWith('[')) return expected;
  return hostNameOf(name) === name.toLowerCase() ? undefined : expected;
}
