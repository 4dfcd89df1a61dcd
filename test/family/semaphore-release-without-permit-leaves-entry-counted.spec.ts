import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys, type SemaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { SCRIPT_STORES, useScriptStore } from '../support/script-stores.js';

/**
 * A holder whose permit key is gone (deleted from outside or evicted, or its lease ran out) and
 * whose entry is still in the holders hash releases: "not yours" (`{0}`), and its entry stayed,
 * its permits counted in `:used` and its token in the due set, until a count looked at it once
 * its deadline there had passed (up to its ttl). When no call came after it (the last one of the
 * semaphore's use), the hash and the due set stayed until they expired, and every acquisition
 * meanwhile pushes that on. Found by a helper reading the scripts after the real-Redis explorer's
 * `store-leftover` at seed 4 (`--deletes --drop-messages`, thirty-sixth session). The release now
 * drops the entry it finds without a permit, as the next count would.
 */
const LIMIT = 2;
const TTL = 60_000;
const WAITER_LEASE = 10_000;

describe.each(SCRIPT_STORES)('the release of a semaphore holder whose permit key is gone: %s', (_label, kind) => {
  const opened = useScriptStore(kind);

  it('frees the permits its entry counted at once, and leaves nothing once everyone left', async () => {
    const key = `sem-permit-gone:${process.pid}`;
    const base = lockRedisKeys('lock:', key);
    const keys = (token: string, permits = 1): SemaphoreKeys => semaphoreKeys(base, token, key, LIMIT, permits);
    const acquire = (token: string, permits = 1, enqueue = true) => opened.store.semaphores.acquire(keys(token, permits), token, TTL, enqueue, WAITER_LEASE);
    const release = (token: string) => opened.store.semaphores.release(keys(token), token, WAITER_LEASE);
    expect(await acquire('h1')).toMatchObject({ acquired: true });
    expect(await acquire('w1')).toMatchObject({ acquired: true });
    // A full call (both holders scored in the due set) that queues.
    expect(await acquire('x', 2)).toMatchObject({ acquired: false, joined: true });
    // w1's permit goes from outside.
    if (opened.data) opened.data.locks.delete(keys('w1').lock);
    else expect(await opened.client!.del(keys('w1').lock)).toBe(1);
    expect(await release('w1')).toMatchObject({ released: false });
    await opened.store.semaphores.leave(keys('x', 2), 'x', TTL, WAITER_LEASE);

    // w1's permit is free: one more caller fits beside h1, long before w1's deadline (its ttl).
    expect(await acquire('a', 1, false)).toMatchObject({ acquired: true });
    for (const token of ['a', 'h1']) expect(await release(token)).toMatchObject({ released: true });
    if (opened.client) {
      const names = keys('w1');
      expect(await opened.client.exists(names.semaphore.holders, names.semaphore.due, names.queue, names.waiters)).toBe(0);
    } else {
      expect(opened.data!.semaphoreHolders.has(keys('w1').semaphore.holders)).toBe(false);
    }
  });
});
