import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';

type Release = (...args: unknown[]) => Promise<unknown>;

/**
 * Holds back the reply of the next release `locks` (a LockService) sends until `deliver()`: the
 * release runs in Redis, and its message reaches waiters, while its holder has no answer yet.
 */
export function holdNextReleaseReply(locks: object): { deliver(): void; held(): boolean } {
  const store = (locks as Record<symbol, { store: { release: Release } }>)[LOCK_RUNNER as symbol]!.store;
  const original = store.release;
  let deliver = (): void => undefined;
  let held = false;
  store.release = function (this: unknown, ...args: unknown[]) {
    delete (store as Partial<typeof store>).release;
    held = true;
    const reply = original.apply(this, args);
    return new Promise((resolve) => (deliver = () => resolve(reply)));
  };
  return { deliver: () => deliver(), held: () => held };
}
