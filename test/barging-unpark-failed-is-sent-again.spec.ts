/**
 * Found by review (barging/parking): the release that frees a parked lock (`unpark`, lock-manager.ts
 * `parkingHost.unpark` -> `cleanUp(releaseInRedis(...))`) is sent once and never again. Every
 * other give-back of the engine that fails without an answer is registered with
 * `UnconfirmedReleases` and sent again while its lease may run, and at app.close() (a holder's
 * release: held-lock.ts `releaseUnconfirmed`; a waiter's leave: lock-manager.ts `leave`).
 *
 * Scenario (real Redis, ioredis through a TCP proxy, `maxRetriesPerRequest: 0`, a usual
 * fail-fast setting; the default 20 does the same after a longer outage): a greedy barging
 * holder's parking release runs in Redis (the lock is now parked under a fresh park token), its
 * reply is lost when the connection drops, and Redis stays unreachable for a few reconnect
 * attempts. `LockParking.answered(…, undefined)` sends the unpark at once; ioredis queues it
 * offline and rejects it at the next failed reconnect. The holder's own release is retried
 * (under the OLD token, which holds nothing any more), the park token's never: once Redis is
 * back, and even after app.close() (whose shutdown resends every unconfirmed release), the lock
 * stays parked in Redis for its whole ttl, held by nobody, and every other process waits it out.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { Lock, LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { createLockApp, type LockApp } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';
import { ReplyHoldingProxy } from './chaos/support/reply-holding-proxy.js';

type Store = { release(keys: unknown, token: string, lease: number, park?: { token: string }): Promise<unknown> };

/** Records every release script call the application sends: token, park token, and how it settled. */
function watchReleases(locks: LockService) {
  const store = (locks[LOCK_RUNNER] as unknown as { store: Store }).store;
  const original = store.release;
  const calls: { token: string; park?: string; outcome?: 'answered' | 'failed' }[] = [];
  store.release = function (this: unknown, ...args: Parameters<Store['release']>) {
    const call: (typeof calls)[number] = { token: args[1], park: args[3]?.token };
    calls.push(call);
    const reply = original.apply(this, args);
    reply.then(
      () => (call.outcome = 'answered'),
      () => (call.outcome = 'failed'),
    );
    return reply;
  };
  return calls;
}

const KEY = 'unpark-retry';
const LOCK = `lock:{${KEY}}`;

describe('a parked lock whose unpark fails (Redis unreachable for a while)', () => {
  const own = useOwnRedis();
  let proxy: ReplyHoldingProxy | undefined;
  let client: Redis | undefined;
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close().catch(() => undefined);
    client?.disconnect();
    await proxy?.close();
    app = proxy = client = undefined;
  });

  it('is freed once Redis is back, or at the latest by app.close(), as every other give-back that failed is', async () => {
    const redis = own.redis();
    proxy = await ReplyHoldingProxy.start(own.server().port);
    client = new Redis(proxy.url, { maxRetriesPerRequest: 0, retryStrategy: () => 20 });
    client.on('error', () => undefined);
    app = await createLockApp({ redis: client, fairness: 'barging', ttl: 30_000 });
    const { locks } = app;

    // A greedy caller: it asks again in the turn its release came back, so its next release parks.
    const first = await locks.acquire(KEY);
    await first.release();
    const held: Lock = await locks.acquire(KEY);
    const calls = watchReleases(locks);

    // The parking release runs in Redis; its reply is held back, then lost with the connection.
    for (const pair of proxy.pairs) pair.held = [];
    const releasing = held.release().catch((error: unknown) => error);
    const parking = calls.at(-1)!;
    expect(parking.park).toBeDefined();
    await expect.poll(() => redis.get(LOCK), { timeout: 5_000, interval: 5 }).toBe(parking.park);

    // Redis unreachable: the release fails, the unpark under the park token is sent (queued
    // offline) and fails at the next reconnect attempt.
    proxy.refusing = true;
    for (const pair of [...proxy.pairs]) proxy.drop(pair);
    expect(await releasing).toBeInstanceOf(Error);
    await expect.poll(() => calls.find((call) => call.token === parking.park)?.outcome, { timeout: 5_000, interval: 5 }).toBe('failed');

    // Redis is reachable again; the library retries what failed (the holder's release under the
    // old token goes out again). Then the application closes, resending whatever is unconfirmed.
    proxy.refusing = false;
    await expect.poll(() => calls.some((call) => call.token === parking.token && call.outcome === 'answered'), { timeout: 10_000, interval: 10 }).toBe(true);
    await app.close();
    app = undefined;

    // Nobody holds the park token: the lock must not be left in Redis for its 30 s lease.
    const left = { owner: await redis.get(LOCK), pttl: await redis.pttl(LOCK) };
    expect(left.owner === parking.park ? `parked lock left for ${left.pttl} ms` : 'freed').toBe('freed');
  });
});
