import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { countAttempts, holdPolls } from '../support/mechanism.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

// Found by review. A release hands the lock to the head waiter (`grant_next`: SET, INCR of the
// counter, a message `<token>:<fencing token>`). A waiter that does not hear that message (its
// subscription down) learns of the grant at its next poll, where ACQUIRE finds the lock already
// its own and answered `GET P{K}:fence or 0`: a counter evicted in between (an `allkeys-*`
// maxmemory policy, which docs/deployment.md says "may also drop fencing counters, and tokens
// then restart") gave the holder the token 0, below every token the resource kept: a fenced
// resource refuses every write of the lock's legitimate holder. docs/locks.md: `fencingToken` is
// "strictly increasing per key, across releases and expiries"; docs/redis-data.md: a counter
// lost "starts at the server's clock in milliseconds", which every other path does.
// Code at fault: lib/core/stores/redis/lock-lua.ts ACQUIRE, the `owner == ARGV[1]` branch.

describe('a waiter granted the lock while its counter is evicted, learning of it by polling', () => {
  let server: RedisServer;
  let admin: Redis;
  const apps: LockApp[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await server.stop();
  });
  afterEach(async () => {
    await admin.config('SET', 'maxclients', '10000');
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** Refuses every new connection, so the waiter's subscriber connection never comes up. */
  async function fillMaxClients(): Promise<void> {
    const clients = String(await admin.client('LIST')).trim().split('\n').length;
    await admin.config('SET', 'maxclients', String(clients));
  }

  it('gets a token above the last holder\'s, as a counter lost anywhere else restarts', async () => {
    const holder = await createLockApp({ redis: server.url, ttl: 30_000 });
    apps.push(holder);
    const waiter = await createLockApp({ redis: server.url, ttl: 30_000 });
    apps.push(waiter);
    await waiter.locks.isLocked('k'); // connected before the server refuses new clients
    const held = await holder.locks.acquire('k');
    await fillMaxClients();
    const attempts = countAttempts(waiter.locks);
    const polls = holdPolls(waiter.locks);
    const waiting = waiter.locks.acquire('k', { waitTimeout: 20_000 });
    await expect.poll(() => attempts.count).toBe(1);
    await held.release(); // grants it to the queued waiter; the message reaches nobody
    const fence = lockRedisKeys('lock:', 'k').fence;
    expect(Number(await admin.get(fence))).toBeGreaterThan(held.fencingToken);
    expect(await admin.del(fence)).toBe(1); // evicted
    polls.resume();
    const lock = await waiting;
    // Fails before the fix: 0.
    expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
    await lock.release();
    const next = await holder.locks.acquire('k');
    expect(next.fencingToken).toBeGreaterThan(lock.fencingToken);
    await next.release();
  });
});
