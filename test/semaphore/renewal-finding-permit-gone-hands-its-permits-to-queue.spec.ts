/**
 * A semaphore holder's renewal that finds its permit key gone (evicted, deleted: the holder is
 * told it lost the lock) drops the holder's entry from the holders hash and lowers `:used`
 * (`forget_permit` in the shared renew scripts, d9880f3), freeing its permits. It handed them to
 * nobody: the waiters queued for them slept until their next poll (up to 250 ms later) or some
 * other semaphore call, where a release, a leave, or any count that frees permits (0fcb240)
 * hands them to the queue at once, with a grant message (review suspicion, forty-sixth session
 * notes; confirmed). The waiter's permit, there before it made any call, and the grant's message
 * on the channel show the renewal handed them on.
 *
 * The renew scripts are shared by every lock kind and get only a token and a ttl per lock; the
 * queue's settings (fence retention, waiter lease, sharded) come from the `:queued` mark, which
 * the waiters' calls write (see `keep_limit` in semaphore-lua.ts). On a Redis Cluster the
 * semaphore's calls declare all seven of its keys, and a renewal declares the permit key alone:
 * the script hands nothing on there (a slot half migrated may show it only part of the queue).
 * It left the permits to the waiters' next call (review suspicion, forty-eighth session: a
 * renewal's hand-on on a Cluster; confirmed): its answer now tells the client, which asks the
 * semaphore to hand them on with a call that declares its keys (the leave script, for a holder
 * that is neither queued nor holding any more). That call follows the renewal's answer, so the
 * Cluster's waiter is polled for.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import type { MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { redisUrl } from '../support/redis.js';
import { SCRIPT_STORES, useScriptStore } from '../support/script-stores.js';

/** Leases and waiter leases that do not run out during the test. */
const LONG = 600_000;

/** The names of one permit of a semaphore of `limit` (`token` taking `permits`) on `key`. */
function permitOf(key: string, token: string, limit = 2, permits = 1) {
  return semaphoreKeys(lockRedisKeys('lock:', key), token, key, limit, permits);
}

describe.each(SCRIPT_STORES)('a renewal that finds a semaphore holder\'s permit gone while waiters are queued, %s', (_label, kind) => {
  const opened = useScriptStore(kind);
  let subscriber: Redis | undefined;
  afterEach(() => {
    subscriber?.disconnect();
    subscriber = undefined;
  });

  /** The messages published on the semaphore's channel from now on (one Redis only; none recorded elsewhere). */
  async function listen(channel: string): Promise<string[]> {
    const messages: string[] = [];
    if (kind !== 'redis') return messages;
    subscriber = new Redis(redisUrl());
    subscriber.on('message', (from: string, message: string) => from === channel && messages.push(message));
    await subscriber.subscribe(channel);
    return messages;
  }

  /** Deletes a permit key from outside, as an eviction or an operator's DEL would. */
  async function deletePermit(name: string): Promise<void> {
    if (opened.client !== undefined) expect(await opened.client.del(name)).toBe(1);
    else expect((opened.store as MemoryStore)['data'].locks.delete(name)).toBe(true);
  }

  async function cleanUp(key: string, tokens: string[]) {
    const keys = (token: string) => permitOf(key, token);
    for (const token of tokens) await opened.store.semaphores.release(keys(token), token, LONG);
    if (opened.client !== undefined) {
      const names = [...tokens.map((token) => keys(token).lock), keys('h').queue, keys('h').waiters, keys('h').semaphore.holders, keys('h').semaphore.due];
      expect(await Promise.all(names.map((name) => opened.client!.exists(name)))).toEqual(names.map(() => 0));
      await opened.client.del(keys('h').fence);
    }
  }

  /** The renewal handed b's permit to w, the head, before w made any call; x still waits. */
  async function handedToW(keys: (token: string) => ReturnType<typeof permitOf>, messages: string[]): Promise<void> {
    await expect.poll(() => opened.store.exists(keys('w').lock), { timeout: 5_000 }).toBe(true);
    expect(await opened.store.exists(keys('x').lock)).toBe(false);
    if (kind === 'redis') await expect.poll(() => messages.map((message) => message.split(':')[0])).toEqual(['w']);
  }

  it('hands the permits it freed to the waiters that fit, in order', async () => {
    const { semaphores } = opened.store;
    const key = `renewal-frees-${kind}-${process.pid}-${Date.now()}`;
    const keys = (token: string) => permitOf(key, token);
    // h and b hold both permits; w waits for one, then x.
    expect(await semaphores.acquire(keys('h'), 'h', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('b'), 'b', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    expect(await semaphores.acquire(keys('x'), 'x', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    const messages = await listen(keys('h').released);
    // b's permit goes (evicted, deleted); b's renewal finds it gone: b is told it lost the lock.
    await deletePermit(keys('b').lock);
    expect(await opened.store.renew(keys('b').lock, 'b', LONG)).toBe(false);
    await handedToW(keys, messages);
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('x'), 'x', LONG, true, LONG)).toMatchObject({ acquired: false, joined: false });
    // h's release hands its permit to x.
    expect((await semaphores.release(keys('h'), 'h', LONG)).grants.map((grant) => grant.token)).toEqual(['x']);
    await cleanUp(key, ['w', 'x']);
  });

  it('hands them on from a watchdog batch too, where another lock of the slot comes first', async () => {
    const { semaphores } = opened.store;
    const key = `renewal-batch-frees-${kind}-${process.pid}-${Date.now()}`;
    const keys = (token: string) => permitOf(key, token);
    // On a Cluster the batch goes as one call per master: the permit, not first, is not declared
    // there, comes back as not known, and is renewed again on its own, declared.
    if (opened.store instanceof LockScripts) await opened.store.perMasterRenewals();
    expect(await semaphores.acquire(keys('h'), 'h', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('b'), 'b', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    expect(await semaphores.acquire(keys('x'), 'x', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    const messages = await listen(keys('h').released);
    // A mutex in the semaphore's slot (its key's own name), held by 'm', renewed first.
    const mutex = lockRedisKeys('lock:', key);
    expect(await opened.store.acquire(mutex, 'm', LONG, false, LONG)).toMatchObject({ acquired: true });
    await deletePermit(keys('b').lock);
    const parts = opened.store.renewBatch([
      { lockKey: mutex.lock, token: 'm', ttl: LONG },
      { lockKey: keys('b').lock, token: 'b', ttl: LONG },
    ]);
    const outcomes: unknown[] = [];
    for (const part of parts) (await part.outcomes).forEach((outcome, i) => (outcomes[part.indexes[i]!] = outcome));
    expect(outcomes).toEqual([true, false]);
    await handedToW(keys, messages);
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect((await semaphores.release(keys('h'), 'h', LONG)).grants.map((grant) => grant.token)).toEqual(['x']);
    await opened.store.release(mutex, 'm', LONG);
    await cleanUp(key, ['w', 'x']);
  });

  it('hands nothing to a head that asks for more than is free, nor to anyone behind it', async () => {
    const { semaphores } = opened.store;
    const key = `renewal-frees-too-few-${kind}-${process.pid}-${Date.now()}`;
    const keys = (token: string) => permitOf(key, token);
    const big = permitOf(key, 'w', 2, 2);
    expect(await semaphores.acquire(keys('h'), 'h', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('b'), 'b', LONG, true, LONG)).toMatchObject({ acquired: true });
    // w asks for both permits; x, behind it, for one.
    expect(await semaphores.acquire(big, 'w', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    expect(await semaphores.acquire(keys('x'), 'x', LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    await deletePermit(keys('b').lock);
    expect(await opened.store.renew(keys('b').lock, 'b', LONG)).toBe(false);
    // One permit free: w does not fit, and x may not pass it.
    expect(await opened.store.exists(keys('w').lock)).toBe(false);
    expect(await opened.store.exists(keys('x').lock)).toBe(false);
    // h's release frees the second: w takes both.
    expect((await semaphores.release(keys('h'), 'h', LONG)).grants.map((grant) => grant.token)).toEqual(['w']);
    expect(await semaphores.acquire(big, 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    await semaphores.release(big, 'w', LONG);
    expect(await semaphores.acquire(keys('x'), 'x', LONG, true, LONG)).toMatchObject({ acquired: true });
    await cleanUp(key, ['x']);
  });
});
