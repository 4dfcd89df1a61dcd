import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { BARGING, FIFO, type Fairness, type FairnessRule } from '../engine/fairness.js';

const FAIRNESS_VALUES: readonly unknown[] = ['fifo', 'barging'] satisfies Fairness[];

/** Checks a `fairness` option (module or call); `undefined` when left out. */
export function checkFairness(value: unknown): Fairness | undefined {
  if (value === undefined) return undefined;
  if (!FAIRNESS_VALUES.includes(value)) throw new InvalidLockOptionsError('fairness', value, `'fifo' or 'barging'`);
  return value as Fairness;
}

/**
 * The fairness rule of one call: its own `fairness`, else the module's. Barging is for
 * mutexes: a semaphore or a read lock that asks for it is refused (their waiters are admitted
 * several at a time, in queue order), and the module's default does not apply to them.
 */
export function resolveFairness(given: unknown, moduleDefault: Fairness, kind: { semaphore: boolean; read: boolean }): FairnessRule {
  const fairness = checkFairness(given);
  if (kind.semaphore || kind.read) {
    if (fairness === 'barging') {
      throw new InvalidLockOptionsError('fairness', fairness, `'fifo' or left out for ${kind.read ? "a read lock (mode: 'read')" : 'a semaphore (option "limit")'}: barging is for mutexes`);
    }
    return FIFO;
  }
  return (fairness ?? moduleDefault) === 'barging' ? BARGING : FIFO;
}
