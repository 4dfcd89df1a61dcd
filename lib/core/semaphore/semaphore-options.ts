import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { SemaphoreOptions } from '../../interfaces/redis-lock-options.interface.js';

/** The largest `limit`: bounds the permits a caller may ask for in one acquisition. */
export const MAX_SEMAPHORE_LIMIT = 1_000_000;

/** A semaphore call's limit and permits after validation. */
export interface SemaphoreRequest {
  limit: number;
  permits: number;
}

/**
 * Checks `limit` and `permits`; `undefined` when the call is not for a semaphore (no `limit`).
 * Throws `InvalidLockOptionsError` naming the option.
 */
export function resolveSemaphoreOptions(options: SemaphoreOptions | undefined): SemaphoreRequest | undefined {
  const limit = options?.limit;
  const permits = options?.permits;
  if (limit === undefined) {
    if (permits !== undefined) throw new InvalidLockOptionsError('permits', permits, 'given only with "limit" (a semaphore)');
    return undefined;
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEMAPHORE_LIMIT) {
    throw new InvalidLockOptionsError('limit', limit, `an integer from 1 to ${MAX_SEMAPHORE_LIMIT}`);
  }
  if (permits === undefined) return { limit, permits: 1 };
  if (!Number.isSafeInteger(permits) || permits < 1 || permits > limit) {
    throw new InvalidLockOptionsError('permits', permits, `an integer from 1 to limit (${limit})`);
  }
  return { limit, permits };
}
