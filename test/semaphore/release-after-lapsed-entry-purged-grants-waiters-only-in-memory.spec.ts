/**
 * A holder whose permit ran out, and whose entry a later call (a granted waiter's confirming
 * acquire) already dropped, then releases. Redis' release script finds neither its permit nor
 * its entry and answers `{0}` at once. The in-memory store (`nestjs-redis-lock/testing`, which
 * must behave as Redis does) handed the permits that entry counted out in that release:
 * `{ released: false, grants: ['w'] }` where Redis answered `{ released: false, grants: [] }`
 * (review suspicion, forty-fifth session). Both answer alike now. Since the forty-sixth session
 * the call that dropped the entry hands its permits on itself (see
 * call-dropping-crashed-holder-hands-its-permits-to-queue.spec.ts), so nothing is left to hand.
 */
import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { SCRIPT_STORES, useScriptStore } from '../support/script-stores.js';

/** Leases and waiter leases that do not run out during the test. */
const LONG = 600_000;
/** The lapsing holder's lease: long enough for the calls before its end, however loaded the machine. */
const SHORT = 1_500;

/** The names of one permit of a semaphore of 2 (`token` taking 1) on `key`. */
function permitOf(key: string, token: string) {
  return semaphoreKeys(lockRedisKeys('lock:', key), token, key, 2, 1);
}

describe.each(SCRIPT_STORES)('a semaphore release by a holder whose lapsed entry was dropped already, %s', (_label, kind) => {
  const opened = useScriptStore(kind);

  it('grants the waiters nothing: the call that dropped the entry handed its permits on', async () => {
    const { semaphores } = opened.store;
    const key = `lapsed-release-${kind}-${process.pid}-${Date.now()}`;
    const keys = (token: string) => permitOf(key, token);
    expect(await semaphores.acquire(keys('h'), 'h', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('b'), 'b', SHORT, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('a'), 'a', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    // h's release hands its permit to a, the head.
    expect((await semaphores.release(keys('h'), 'h', LONG)).grants.map((grant) => grant.token)).toEqual(['a']);
    // b's lease runs out (b stalled): its permit is gone.
    await expect.poll(() => opened.store.exists(keys('b').lock)).toBe(false);
    // a confirms its grant: the count drops b's entry, and its permit goes to w.
    expect(await semaphores.acquire(keys('a'), 'a', LONG, true, LONG)).toMatchObject({ acquired: true });
    // b, back, releases what it no longer holds.
    const released = await semaphores.release(keys('b'), 'b', LONG);
    expect({ released: released.released, grants: released.grants.map((grant) => grant.token) }).toEqual({ released: false, grants: [] });
    // w's next call confirms the permit b's entry counted.
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    await semaphores.release(keys('a'), 'a', LONG);
    await semaphores.release(keys('w'), 'w', LONG);
    // Nothing left but the fencing counter, which no retention expires.
    if (opened.client !== undefined) {
      expect(await Promise.all([keys('h').lock, keys('b').lock, keys('a').lock, keys('w').lock, keys('h').queue, keys('h').waiters, keys('h').semaphore.holders, keys('h').semaphore.due].map((name) => opened.client!.exists(name)))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
      await opened.client.del(keys('h').fence);
    }
  });
});
