import { LAST_ATTEMPT_GRACE_MS } from './core/engine/waiter-timing.js';

/**
 * Seconds an HTTP client is told to wait (`Retry-After`) after a 503 for a Redis that did not
 * answer, or could not be asked: the bound the library gives an unanswered attempt (1 s), so that
 * clients space their retries by what one costs here, not a promise of when Redis is back. A 409
 * gets none: when the holder lets go is not known to a waiter (it renews its lease for as long as
 * it works), and a 503 for a closing application none either (a retry goes to another instance at
 * once). `LockConflictInterceptor` and the lock board answer by this one rule.
 */
const RETRY_AFTER_SECONDS = String(Math.ceil(LAST_ATTEMPT_GRACE_MS / 1000));

/** An HTTP response as Express and Fastify give it to a route: only what setting a header reads. */
export type HeaderResponse = { header?: (name: string, value: string) => unknown; headersSent?: boolean; sent?: boolean; raw?: { headersSent?: boolean } } | undefined;

/** Sets `Retry-After` on an HTTP response (Express' and Fastify's alike), unless it has started (SSE). */
export function setRetryAfter(response: HeaderResponse): void {
  if (typeof response?.header !== 'function' || response.headersSent === true || response.sent === true || response.raw?.headersSent === true) return;
  response.header('Retry-After', RETRY_AFTER_SECONDS);
}
