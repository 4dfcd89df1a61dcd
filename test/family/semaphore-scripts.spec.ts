import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys, type SemaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { sleep } from '../support/lock-app.js';
import { SCRIPT_STORES, useScriptStore } from '../support/script-stores.js';

const LIMIT = 2;
const TTL = 60_000;
/** Waiters' liveness lease and the grant lease: long enough for the waiters to outlive the crashed holders. */
const WAITER_LEASE = 1_000;
const HOLDER_TTL = 300;

// The semaphore protocol one script call at a time, on a real Redis server, a Cluster and in memory.
describe.each(SCRIPT_STORES)('semaphore scripts: %s', (_label, kind) => {
  const opened = useScriptStore(kind);
  let run = 0;

  const semaphore = (): ((token: string) => SemaphoreKeys) => {
    const key = `sem-scripts:${process.pid}:${++run}`;
    const base = lockRedisKeys('lock:', key);
    return (token) => semaphoreKeys(base, token, key, LIMIT, 1);
  };
  const acquire = (keys: (token: string) => SemaphoreKeys, token: string, ttl = TTL) => opened.store.semaphores.acquire(keys(token), token, ttl, true, WAITER_LEASE);

  it('keeps the limit while a renewed holder outlives its first lease', async () => {
    const keys = semaphore();
    expect(await acquire(keys, 'h1', HOLDER_TTL)).toMatchObject({ acquired: true });
    // Renewed to a longer lease before the first one ran out, then past that first lease.
    expect(await opened.store.renew(keys('h1').lock, 'h1', 10 * HOLDER_TTL)).toBe(true);
    await sleep(HOLDER_TTL + 100);
    const key = keys('x').semaphore.key;
    const other = semaphoreKeys(lockRedisKeys('lock:', key), 'x', key, LIMIT + 1, 1);
    expect(await opened.store.semaphores.acquire(other, 'x', TTL, false, WAITER_LEASE)).toMatchObject({ acquired: false, limitInUse: LIMIT });
    await opened.store.semaphores.release(keys('h1'), 'h1', WAITER_LEASE);
  });

  it('answers "acquired" to a queued caller that its own refresh grants a permit to, and never lets a third holder in', async () => {
    const keys = semaphore();
    // Two holders that crash (never renew, never release): the semaphore is full until their permits expire.
    expect(await acquire(keys, 'h1', HOLDER_TTL)).toMatchObject({ acquired: true });
    expect(await acquire(keys, 'h2', HOLDER_TTL)).toMatchObject({ acquired: true });
    expect(await acquire(keys, 'a')).toMatchObject({ acquired: false });
    expect(await acquire(keys, 'c')).toMatchObject({ acquired: false });
    await sleep(HOLDER_TTL + 100);
    // C is not at the head, but both permits are free: its refresh grants A (the head) and then C
    // itself. That grant must end this very call as "acquired", with C out of the queue.
    const c = await acquire(keys, 'c');
    expect.soft(c).toMatchObject({ acquired: true });
    // Either way C now believes it holds a permit (a "wait" reply is followed by the grant's
    // message, which the engine takes and renews), and so does A.
    const holders = new Set(['a', 'c']);
    if (!c.acquired) expect(await opened.store.renew(keys('c').lock, 'c', TTL)).toBe(true);
    expect(await opened.store.renew(keys('a').lock, 'a', TTL)).toBe(true);
    // A gives its permit back: nobody is left in the queue to get it (C must not be re-queued).
    holders.delete('a');
    const released = await opened.store.semaphores.release(keys('a'), 'a', WAITER_LEASE);
    expect.soft(released).toMatchObject({ released: true, grants: [] });
    // C, which renews every ttl/3, holds one permit: of D and E, one gets the other, also once
    // a grant lease has passed.
    for (const token of ['d', 'e']) if ((await acquire(keys, token)).acquired) holders.add(token);
    await sleep(WAITER_LEASE + 100);
    for (const token of ['d', 'e']) if (!holders.has(token) && (await acquire(keys, token)).acquired) holders.add(token);
    expect([...holders].sort()).toEqual(['c', 'd']);
    expect(await opened.store.renew(keys('c').lock, 'c', TTL)).toBe(true);
    await opened.store.semaphores.leave(keys('e'), 'e', TTL, WAITER_LEASE);
    for (const token of ['c', 'd']) await opened.store.semaphores.release(keys(token), token, WAITER_LEASE);
  });
});
