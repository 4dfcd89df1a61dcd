import type { Lock } from '../../interfaces/lock.interface.js';
import { quoteKey } from '../keys/quote-key.js';
import { shownKeys } from '../keys/shown-keys.js';
import { MultiLock } from './multi-key-lock.js';

/**
 * A lock as a log line names it: `lock "k"`, or `the lock of keys "a", "b", "c" and 2 more` for
 * a multi-key lock, whose `key` is only its first key. Built when the line is written.
 */
export function shownLock(lock: Lock): string {
  return lock instanceof MultiLock ? `the lock of keys ${shownKeys(lock.keys)}` : `lock ${quoteKey(lock.key)}`;
}
