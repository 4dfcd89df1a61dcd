import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockEvent } from '../lib/index.js';
import { sleep, useLockApps } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

describe('a lock handed over on release', () => {
  const redis = useRedis();
  const app = useLockApps();
  const user = `handoff-${process.pid}`;
  let admin: Redis;
  beforeAll(async () => {
    admin = new Redis(redisUrl());
    await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all');
  });
  afterAll(async () => {
    await admin.call('ACL', 'DELUSER', user);
    await admin.quit();
  });

  it('survives a transient error on its first renewal: it retries until its short lease ends', async () => {
    const url = new URL(redisUrl());
    url.username = user;
    url.password = 'pw';
    const holder = await app({ ttl: 30_000 });
    const waiter = await app({ redis: url.toString(), ttl: 30_000 });
    const events: LockEvent[] = [];
    waiter.locks.events$.subscribe((event) => events.push(event));
    const held = await holder.locks.acquire('k');
    const waiting = waiter.locks.acquire('k', { waitTimeout: 10_000 });
    await sleep(300); // queued and subscribed
    // Scripts fail for the waiter for a moment: its first renewal of the handed-over lock errors.
    await admin.call('ACL', 'SETUSER', user, '-evalsha', '-eval');
    await held.release();
    const lock = await waiting;
    await sleep(300);
    await admin.call('ACL', 'SETUSER', user, '+evalsha', '+eval');
    // Well past the 1 s lease the handover started on.
    await sleep(1_500);
    expect(lock.signal.aborted).toBe(false);
    expect(await redis.pttl('lock:{k}')).toBeGreaterThan(25_000);
    expect(events.filter((event) => event.type === 'lost')).toEqual([]);
    await lock.release();
  });
});
