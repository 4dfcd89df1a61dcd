import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import type { WaitForReplicasOptions } from '../../interfaces/redis-lock-options.interface.js';
import { parseDuration } from '../time/duration.js';

/** The module's `waitForReplicas` after validation. */
export interface ReplicaWait {
  /** Replicas that must have the acquisition before it is handed out. */
  replicas: number;
  /** Milliseconds `WAIT` may block. */
  timeout: number;
}

/** More replicas than any deployment has: surely a mistake. */
export const MAX_REPLICAS = 100;
export const DEFAULT_REPLICA_WAIT_MS = 1_000;

/**
 * Checks the module's `waitForReplicas` option against the resolved `ttl`: `undefined` (acquire
 * does not wait for replication) or `{ replicas, timeout? }`. Refused in quorum mode, where the
 * masters are independent and a majority of them already holds every lock.
 */
export function resolveWaitForReplicas(value: unknown, ttl: number, quorum: boolean): ReplicaWait | undefined {
  if (value === undefined) return undefined;
  if (quorum) {
    throw new InvalidLockOptionsError(
      'waitForReplicas',
      value,
      'left out in quorum mode (an array of independent masters: a lock is held by a majority of them, and they have no replicas to wait for)',
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidLockOptionsError('waitForReplicas', value, 'an object such as { replicas: 1, timeout: 1000 }');
  }
  // A misspelt name (`timout`) would leave the default timeout in its place without a word.
  for (const name of Object.keys(value)) {
    if (name !== 'replicas' && name !== 'timeout') {
      throw new InvalidLockOptionsError(`waitForReplicas.${name}`, (value as Record<string, unknown>)[name], 'left out: it is no option of waitForReplicas (its options are replicas, timeout)');
    }
  }
  const { replicas, timeout } = value as WaitForReplicasOptions;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) {
    throw new InvalidLockOptionsError('waitForReplicas.replicas', replicas, `an integer from 1 to ${MAX_REPLICAS}`);
  }
  // The lease runs while WAIT blocks: at most half of it may go to waiting.
  const max = Math.floor(ttl / 2);
  const resolved = parseDuration(timeout === undefined ? Math.min(DEFAULT_REPLICA_WAIT_MS, max) : timeout, 'waitForReplicas.timeout', 1, max, ` (at most half the ttl ${ttl})`);
  return { replicas, timeout: resolved };
}
