import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { subscribers, useOwnRedis } from '../support/redis.js';
import { ChaosWorker } from './support/chaos-worker.js';
import { ReplyHoldingProxy, type ProxiedConnection } from './support/reply-holding-proxy.js';
import { queuedWaiterToken } from './support/queued-waiter.js';

// Found by the real-Redis explorer (seed 491271: a read-write lock on a Cluster whose master
// restarted empty while a worker was paused). A release handed the lock to a waiter whose process
// was frozen; Redis then lost its data, and someone else took the lock. On thawing, the waiter's
// overdue refresh went out first and its grant's message came in while that attempt was in
// flight; the busy reply's fencing counter, restarted with the data, stood below the grant's
// token, so the grant passed for one made after the attempt, and its lease was counted from
// there: the waiter ran its code beside the new holder. The busy reply now says that it queued
// the waiter anew, and a waiter whose place was lost confirms a grant with an attempt first.
// A counter Redis lost starts again at the server's clock (above the stale grant's token); one
// restored from an older snapshot does not, and that is the loss this spec plays.
// The order is the proxy's, not the thaw's: a thawed process reads what waits in its sockets
// before its overdue timers fire, so the grant's message came first, too late to be taken, and
// this spec passed with the `joined` check reverted (explore/bugs/47). The waiter's connections
// go through a proxy that holds the message, and the refresh's reply, until the refresh ran.
describe('chaos: a grant made before Redis lost its data', () => {
  const own = useOwnRedis();
  let holder: LockApp | undefined;
  let waiter: ChaosWorker | undefined;
  let proxy: ReplyHoldingProxy | undefined;
  afterEach(async () => {
    waiter?.child.kill('SIGCONT');
    waiter?.child.kill('SIGKILL');
    await holder?.close();
    await proxy?.close();
    holder = waiter = proxy = undefined;
  });

  /** Delivers what `pair` held, and lets the rest flow; resolves once it is in the client's socket. */
  async function deliver(pair: ProxiedConnection): Promise<void> {
    const held = pair.held ?? [];
    pair.held = undefined;
    for (const data of held) if (!pair.client.write(data)) await once(pair.client, 'drain');
    await new Promise<void>((resolve) => pair.client.write(Buffer.alloc(0), () => resolve()));
  }

  it('is not taken by a waiter that thaws after the loss: it waits for the new holder and gets a token of the new counter', { timeout: 30_000 }, async () => {
    const redis = own.redis();
    proxy = await ReplyHoldingProxy.start(own.server().port);
    holder = await createLockApp({ redis: own.url() });
    await redis.set('lock:{lost}:fence', '10'); // the key was locked ten times before
    const first = await holder.locks.acquire('lost', { ttl: 10_000 });
    expect(first.fencingToken).toBe(11);
    waiter = ChaosWorker.start({ REDIS_URL: proxy.url, MODE: 'wait', KEY: 'lost', TTL: 600, WAIT: 20_000 }, 'wait');
    // Queued and subscribed; its attempt after subscribing answered (a refresh is 200 ms at most).
    await queuedWaiterToken(redis, 'lock:{lost}');
    await expect.poll(() => subscribers(redis, 'lock:{lost}:released'), { timeout: 10_000 }).toBe(1);
    const [command] = proxy.commandPairs('lock:{lost}');
    const subscriber = [...proxy.pairs].find((pair) => /subscribe/i.test(pair.sent));
    expect(command && subscriber).toBeDefined();

    waiter.child.kill('SIGSTOP');
    // The release hands the lock to the frozen waiter (token 12); its message is held.
    subscriber!.held = [];
    await first.release();
    expect(await redis.get('lock:{lost}:fence')).toBe('12');
    await expect.poll(() => subscriber!.held!.length, { timeout: 10_000 }).toBeGreaterThan(0);
    // Redis restarts from a snapshot taken before these two locks (the counter back at 10), and
    // another process takes the lock (a foreign owner, without expiry).
    await redis.flushall();
    await redis.set('lock:{lost}:fence', '10');
    await redis.set('lock:{lost}', 'new-holder');
    // Thawed, the waiter's next refresh queues it anew (its place went with the data); its busy
    // reply is held, and the grant's message is read while that attempt is in flight.
    command!.held = [];
    const sentBefore = command!.sent.length;
    // The acquire script, the only one its connection has run so far (renewals run another).
    const acquireScript = /evalsha\r\n\$40\r\n([0-9a-f]{40})\r\n/i.exec(command!.sent)?.[1];
    expect(acquireScript).toBeDefined();
    waiter.child.kill('SIGCONT');
    await queuedWaiterToken(redis, 'lock:{lost}');
    await deliver(subscriber!);
    await deliver(command!);

    // Redis' word: new-holder has the lock. The waiter must ask again before it holds anything:
    // its next attempt goes out on its command connection, after the refresh.
    const attempts = (): number => command!.sent.slice(sentBefore).split(acquireScript!).length - 1;
    const acquiredFirst = waiter.next<{ acquired: number }>('acquired');
    const firstMove = await Promise.race([
      acquiredFirst.then((line) => ({ handedOut: line.acquired })),
      expect.poll(attempts, { timeout: 10_000, interval: 5 }).toBeGreaterThan(1).then(() => 'attempted again'),
    ]);
    expect(firstMove).toBe('attempted again');
    expect(waiter.lines).toEqual([]);
    await redis.del('lock:{lost}');
    // Its next refresh finds the lock free: a token of the counter rolled back, not the stale grant's 12.
    expect(await acquiredFirst).toMatchObject({ acquired: 11 });
  });
});
