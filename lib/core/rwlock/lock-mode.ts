import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { LockModeOptions } from '../../interfaces/redis-lock-options.interface.js';

/**
 * Checks `mode`: whether the call is for the read side of a read-write lock. `'write'` (the
 * default) is the plain exclusive lock. Throws `InvalidLockOptionsError` naming the option.
 */
export function isReadMode(options: (LockModeOptions & { limit?: unknown }) | undefined): boolean {
  const mode = options?.mode;
  if (mode === undefined || mode === 'write') return false;
  if (mode !== 'read') throw new InvalidLockOptionsError('mode', mode, '"read" or "write"');
  if (options?.limit !== undefined) throw new InvalidLockOptionsError('mode', mode, '"write" (or absent) with "limit": a semaphore has no read side');
  return true;
}
