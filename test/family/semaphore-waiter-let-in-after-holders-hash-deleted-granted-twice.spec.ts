import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys, type SemaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { SCRIPT_STORES, useScriptStore } from '../support/script-stores.js';

/**
 * The holders hash deleted from outside (an operator's DEL, an eviction) while someone waits takes
 * the `:queued` mark with it, so a waiter's next call is let in by a path that does not look at the
 * queue (the lone holder's off a Cluster, the fast path on one), and its place stays queued. The
 * next full call that served the queue granted it a second time: `:used` counted its permits
 * twice under one entry, and one permit stayed counted after everyone left, for as long as the
 * semaphore stayed in use (every acquisition pushes the hash's expiry on). Found by the real-Redis
 * explorer (`--deletes --drop-messages`, seeds 460029 and 460057).
 *
 * That fix left the place itself queued: once the waiter had released, the place no longer
 * named a holder, and the next full call granted it a permit for nobody, counted against the
 * limit for its grant lease (a caller of the last free permit refused meanwhile). Found by a
 * helper's reading of the scripts after the explorer's `store-leftover` at seed 4 (thirty-sixth
 * session). A hash created anew while the queue keys are there now carries the `:queued` mark,
 * and the fast paths leave such a semaphore to the full one, which takes the caller's own place
 * when it lets it in.
 */
const LIMIT = 2;
const TTL = 60_000;
const WAITER_LEASE = 10_000;

describe.each(SCRIPT_STORES)('a semaphore whose holders hash was deleted while someone waited: %s', (_label, kind) => {
  const opened = useScriptStore(kind);
  let run = 0;
  /** Two holders and a waiter w, the hash deleted from outside, then w's refresh: it holds now (the lost holders are not counted). */
  const waiterLetInAfterDeletion = async () => {
    const key = `sem-holders-deleted:${process.pid}:${++run}`;
    const base = lockRedisKeys('lock:', key);
    const keys = (token: string, permits = 1): SemaphoreKeys => semaphoreKeys(base, token, key, LIMIT, permits);
    const acquire = (token: string, permits = 1, enqueue = true) => opened.store.semaphores.acquire(keys(token, permits), token, TTL, enqueue, WAITER_LEASE);
    expect(await acquire('h1')).toMatchObject({ acquired: true });
    expect(await acquire('h2')).toMatchObject({ acquired: true });
    expect(await acquire('w')).toMatchObject({ acquired: false, joined: true });
    // The hash goes from outside, its `:queued` mark and the holders' entries with it.
    const holders = keys('w').semaphore.holders;
    if (opened.data) {
      opened.data.semaphoreHolders.delete(holders);
      opened.data.semaphoreLimits.delete(holders);
    } else {
      expect(await opened.client!.del(holders)).toBe(1);
    }
    expect(await acquire('w')).toMatchObject({ acquired: true });
    return { keys, acquire, holders };
  };

  it('never grants the waiter let in meanwhile a second time, and frees every permit once all leave', async () => {
    const { keys, acquire, holders } = await waiterLetInAfterDeletion();
    // A caller for both permits takes the full path, which serves the queue: w must not be granted again.
    const x = await acquire('x', 2);
    expect(x).toMatchObject({ acquired: false });
    await opened.store.semaphores.leave(keys('x', 2), 'x', TTL, WAITER_LEASE);
    for (const token of ['w', 'h1', 'h2']) await opened.store.semaphores.release(keys(token), token, WAITER_LEASE);

    // Everyone left: both permits are free.
    expect(await acquire('a1', 1, false)).toMatchObject({ acquired: true });
    expect(await acquire('a2', 1, false)).toMatchObject({ acquired: true });
    for (const token of ['a1', 'a2']) await opened.store.semaphores.release(keys(token), token, WAITER_LEASE);
    if (opened.client) expect(await opened.client.exists(holders, keys('w').semaphore.due, keys('w').queue, keys('w').waiters)).toBe(0);
  });

  it('grants nobody the place the waiter left queued once it has released: the permits stay free', async () => {
    const { keys, acquire, holders } = await waiterLetInAfterDeletion();
    await opened.store.semaphores.release(keys('w'), 'w', WAITER_LEASE);
    expect(await acquire('y')).toMatchObject({ acquired: true });
    // A full call that serves the queue: w's old place must not be granted (w's call has ended).
    expect(await acquire('x', 2)).toMatchObject({ acquired: false });
    await opened.store.semaphores.leave(keys('x', 2), 'x', TTL, WAITER_LEASE);
    for (const token of ['y', 'h1', 'h2']) await opened.store.semaphores.release(keys(token), token, WAITER_LEASE);

    expect(await acquire('a1', 1, false)).toMatchObject({ acquired: true });
    expect(await acquire('a2', 1, false)).toMatchObject({ acquired: true });
    for (const token of ['a1', 'a2']) await opened.store.semaphores.release(keys(token), token, WAITER_LEASE);
    if (opened.client) expect(await opened.client.exists(holders, keys('w').semaphore.due, keys('w').queue, keys('w').waiters, keys('w').lock)).toBe(0);
  });

  it('hands the permits its release frees to the next waiter, never to the place it left queued', async () => {
    const { keys, acquire, holders } = await waiterLetInAfterDeletion();
    expect(await acquire('z')).toMatchObject({ acquired: true });
    // Full (w and z): y joins without a look at the queue, behind the place w left there.
    expect(await acquire('y')).toMatchObject({ acquired: false, joined: true });
    const released = await opened.store.semaphores.release(keys('w'), 'w', WAITER_LEASE);
    expect(released.grants.map((grant) => grant.token)).toEqual(['y']);
    for (const token of ['y', 'z', 'h1', 'h2']) await opened.store.semaphores.release(keys(token), token, WAITER_LEASE);
    if (opened.client) expect(await opened.client.exists(holders, keys('w').semaphore.due, keys('w').queue, keys('w').waiters)).toBe(0);
  });
});

