/**
 * A semaphore call that answers without taking permits itself (a granted waiter's confirming
 * acquire, whose entry is there already; a caller refused for asking another limit) counts the
 * holders first, and that count drops the entries of holders whose permits are gone (crashed, or
 * stalled past their lease), freeing their permits. The scripts answered at once and handed
 * those permits to nobody: the waiters queued for them slept until their next poll (up to 250 ms
 * later), where every other call that frees permits (a release, a leave, a count before the
 * caller's own grant) hands them to the queue at once, with a grant message (review suspicion,
 * forty-sixth session, confirmed). The waiter's permit, there before it made any call, and on one
 * Redis the grant's message on the channel, show the call handed them on.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { redisUrl } from '../support/redis.js';
import { SCRIPT_STORES, useScriptStore } from '../support/script-stores.js';

/** Leases and waiter leases that do not run out during the test. */
const LONG = 600_000;
/** The crashing holder's lease: long enough for the calls before its end, however loaded the machine. */
const SHORT = 1_500;

/** The names of one permit of a semaphore of `limit` (`token` taking 1) on `key`. */
function permitOf(key: string, token: string, limit = 2) {
  return semaphoreKeys(lockRedisKeys('lock:', key), token, key, limit, 1);
}

describe.each(SCRIPT_STORES)('a semaphore call whose count drops a crashed holder, %s', (_label, kind) => {
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

  /** Holders h (for good) and b (SHORT), waiters `queued` behind them; resolves once b's permit is gone. */
  async function crashedHolder(key: string, queued: string[]) {
    const { semaphores } = opened.store;
    const keys = (token: string) => permitOf(key, token);
    expect(await semaphores.acquire(keys('h'), 'h', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await semaphores.acquire(keys('b'), 'b', SHORT, true, LONG)).toMatchObject({ acquired: true });
    for (const token of queued) expect(await semaphores.acquire(keys(token), token, LONG, true, LONG)).toMatchObject({ acquired: false, joined: true });
    return {
      keys,
      lapsed: async () => {
        await expect.poll(() => opened.store.exists(keys('b').lock)).toBe(false);
      },
    };
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

  it("a granted waiter's confirming acquire hands the permits it freed to the next waiter", async () => {
    const { semaphores } = opened.store;
    const key = `confirm-frees-${kind}-${process.pid}-${Date.now()}`;
    const { keys, lapsed } = await crashedHolder(key, ['a', 'w']);
    // h's release hands its permit to a, the head; b crashes.
    expect((await semaphores.release(keys('h'), 'h', LONG)).grants.map((grant) => grant.token)).toEqual(['a']);
    await lapsed();
    const messages = await listen(keys('h').released);
    // a confirms its grant: the count drops b's entry, and its permit goes to w.
    expect(await semaphores.acquire(keys('a'), 'a', LONG, true, LONG)).toMatchObject({ acquired: true });
    expect(await opened.store.exists(keys('w').lock)).toBe(true);
    if (kind === 'redis') await expect.poll(() => messages.map((message) => message.split(':')[0])).toEqual(['w']);
    // w's next call confirms its grant.
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    await cleanUp(key, ['a', 'w']);
  });

  it('a caller refused for another limit hands the permits its count freed to the waiter', async () => {
    const { semaphores } = opened.store;
    const key = `other-limit-frees-${kind}-${process.pid}-${Date.now()}`;
    const { keys, lapsed } = await crashedHolder(key, ['w']);
    await lapsed();
    const messages = await listen(keys('h').released);
    // x asks for a limit of 3: refused, but its count drops b's entry, and b's permit goes to w.
    expect(await semaphores.acquire(permitOf(key, 'x', 3), 'x', LONG, true, LONG)).toMatchObject({ acquired: false, limitInUse: 2 });
    expect(await opened.store.exists(keys('w').lock)).toBe(true);
    if (kind === 'redis') await expect.poll(() => messages.map((message) => message.split(':')[0])).toEqual(['w']);
    expect(await semaphores.acquire(keys('w'), 'w', LONG, true, LONG)).toMatchObject({ acquired: true });
    await cleanUp(key, ['h', 'w']);
  });
});
