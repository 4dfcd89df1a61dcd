/**
 * How long node-redis would wait before its next attempt to reconnect, given a client's
 * `socket.reconnectStrategy`: `false` (or an `Error` from a function) when it would stop.
 *
 * The library's subscriber connection reconnects on a timer of its own, with this delay, instead
 * of leaving it to node-redis: node-redis waits between attempts on a `timers/promises` timer that
 * `destroy()` cannot clear, so a subscriber closed while waiting kept the process alive until the
 * attempt was due. The delays stay the application's: its number, its function, or node-redis'
 * default (50 ms doubling up to 2 s, plus up to 200 ms of jitter, and no retry after a socket
 * timeout), the same in node-redis 5 and 6.
 */
export function reconnectDelay(strategy: unknown, retries: number, cause: unknown): number | false {
  if (strategy === false) return false;
  if (typeof strategy === 'number') return strategy;
  if (typeof strategy === 'function') {
    try {
      const delay: unknown = (strategy as (retries: number, cause: unknown) => unknown)(retries, cause);
      if (delay === false || delay instanceof Error) return false;
      // node-redis reports a strategy that answers anything else, and falls back to its default.
      if (typeof delay === 'number') return delay;
    } catch {
      // node-redis falls back to its default when the strategy throws.
    }
  }
  if (isSocketTimeout(cause)) return false;
  return Math.min(2 ** retries * 50, 2_000) + Math.floor(Math.random() * 200);
}

/** node-redis' `SocketTimeoutError` or a subclass, told by class name: `redis` is not imported. */
function isSocketTimeout(cause: unknown): boolean {
  for (let proto = cause === null || typeof cause !== 'object' ? null : Object.getPrototypeOf(cause); proto !== null; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { constructor?: { name?: unknown } }).constructor?.name === 'SocketTimeoutError') return true;
  }
  return false;
}
