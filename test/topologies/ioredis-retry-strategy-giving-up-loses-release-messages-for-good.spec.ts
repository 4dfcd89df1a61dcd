/**
 * Found by review (drivers). An ioredis client handed in whose `retryStrategy` gives up (returns
 * a non-number: `() => null`, fail fast, or a bounded number of tries). The library hears release
 * messages on a `duplicate()` of it, which copies that strategy: when that connection dropped on
 * its own (a proxy's or load balancer's idle timeout ends the idle pub/sub connection first,
 * `CLIENT KILL` here) while the command connection stayed up, ioredis gave it up for good. Every
 * SUBSCRIBE from then on was refused ("Connection is closed."): the process' waiters never heard
 * a release message again, for the application's life, and found freed locks only by polling,
 * with nothing in the log but a warning per new channel that waiters "poll until a retry
 * succeeds", which never did. As for node-redis (`reconnectStrategy: false`), the library now
 * logs an error naming the option, and the next wait on a lock nobody here waits for opens the
 * connection again, subscribed to every channel still wanted.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { countAttempts, releaseBetweenPolls } from '../support/mechanism.js';
import { subscribers, useOwnRedis } from '../support/redis.js';
import { killSubscriberOfWaiter } from '../support/given-up-subscriber.js';

const STOPPED = /^Release messages stopped: the connection this process hears lock releases on dropped, and the Redis client's reconnect strategy \(retryStrategy\) gave it up \(.*\)\. Waiters find a freed lock only by polling/;

describe('an ioredis client whose retryStrategy gives up', () => {
  const server = useOwnRedis();
  const apps: LockApp[] = [];
  const clients: Redis[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    for (const client of clients.splice(0)) client.disconnect();
  });

  it('logs an error when the connection its waiters hear releases on is dropped and given up, and the next wait opens it again', { timeout: 30_000 }, async () => {
    const client = new Redis(server.url(), { retryStrategy: () => null });
    client.on('error', () => undefined);
    clients.push(client);
    await client.ping();
    const waiter = await createLockApp({ redis: client });
    apps.push(waiter);
    await killSubscriberOfWaiter(waiter, server.redis(), STOPPED);
    // The command connection never dropped.
    expect(client.status).toBe('ready');

    // A wait on another lock opens the connection again, and the release message wakes it.
    const holder = await createLockApp({ redis: server.url() });
    apps.push(holder);
    const held = await holder.locks.acquire('reopened', { ttl: 20_000 });
    const attempts = countAttempts(waiter.locks);
    const next = waiter.locks.acquire('reopened', { waitTimeout: '20s' });
    next.catch(() => undefined);
    await expect.poll(() => subscribers(server.redis(), 'lock:{reopened}:released'), { timeout: 10_000 }).toBe(1);
    const { lock, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, next, 'watching');
    attempts.stop();
    // Woken by the release message: a poll would have made an attempt.
    expect(attemptsSinceRelease).toBe(0);
    await lock.release();
    expect(waiter.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([]);
  });
});
