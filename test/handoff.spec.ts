import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Lock, LockEvent, LockOptions } from '../lib/index.js';
import { createLockApp, sleep, useLockApps } from './support/lock-app.js';
import { countAttempts } from './support/mechanism.js';
import { lockScriptKind, watchCommands, type SeenCommand } from './support/monitor.js';
import { startRedisServer } from './support/redis-server.js';
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
    const attempts = countAttempts(waiter.locks);
    const waiting = waiter.locks.acquire('k', { waitTimeout: 10_000 });
    // Queued and subscribed: a waiter not yet queued when its scripts start failing could take
    // the lock only with a script, and they come back only once it holds it (a fresh-clone run,
    // loaded, where 300 ms of sleep were not enough).
    await attempts.watching();
    attempts.stop();
    // Scripts fail for the waiter for a moment: its first renewal of the handed-over lock errors.
    await admin.call('ACL', 'SETUSER', user, '-evalsha', '-eval');
    let lock: Lock;
    try {
      await held.release();
      lock = await waiting;
      await sleep(300);
    } finally {
      // Given back whatever happened: a retry of this test runs as the same user.
      await admin.call('ACL', 'SETUSER', user, '+evalsha', '+eval');
    }
    // Well past the 1 s lease the handover started on.
    await sleep(1_500);
    expect(lock.signal.aborted).toBe(false);
    expect(await redis.pttl('lock:{k}')).toBeGreaterThan(25_000);
    expect(events.filter((event) => event.type === 'lost')).toEqual([]);
    await lock.release();
  });
});

describe('a lock handed to a waiter of the same process', () => {
  it('reaches it without the release message (the release wakes it locally)', async () => {
    // A server of its own: the test drops every subscriber connection on it.
    const server = await startRedisServer();
    const admin = new Redis(server.url);
    const app = await createLockApp({ redis: server.url, ttl: 30_000 });
    try {
      const held = await app.locks.acquire('local');
      const waiting = app.locks.acquire('local', { waitTimeout: 10_000 });
      await sleep(100); // queued and subscribed
      const commands = await watchCommands('lock:{local}', server.url);
      // The release message is published while the subscriber is gone (ioredis reconnects it
      // 50 ms later at the earliest): only the local wake can hand the lock over at once.
      await admin.client('KILL', 'TYPE', 'pubsub');
      await held.release();
      const next = await waiting;
      await commands.stop();
      // Woken at once: the waiter never asked again (left to its next poll or to the
      // resubscription, it would run the acquire script).
      expect(commands.seen.filter((command) => lockScriptKind(command) === 'acquire')).toEqual([]);
      await next.release();
    } finally {
      await app.close();
      admin.disconnect();
      await server.stop();
    }
  });
});

describe('the script calls of a contended acquisition', () => {
  const app = useLockApps();

  /**
   * The script calls in `seen` that name the owner token of `lock` (its attempts, renewals and
   * release): EVALSHA, each call's first try (a NOSCRIPT reply makes the client send it again as EVAL).
   */
  const callsOf = (seen: SeenCommand[], lock: Lock) => {
    const token = (lock as unknown as { token: string }).token;
    return seen.filter((command) => /^evalsha$/i.test(command.args[0] ?? '') && command.args.some((arg) => arg.includes(token)));
  };

  it.each<[string, LockOptions]>([
    ['a mutex', {}],
    ['a read lock', { mode: 'read' }],
    ['a semaphore', { limit: 1 }],
  ])('are one attempt and the release for %s handed over for a short critical section, when its process watched the key already', async (_kind, options) => {
    const holder = await app({ ttl: 30_000 });
    const waiter = await app({ ttl: 30_000 });
    const key = `calls-${randomUUID().slice(0, 8)}`;
    const commands = await watchCommands(key, undefined, (arg) => arg.includes(key));
    const held = await holder.locks.acquire(key, { ...options, mode: options.mode === 'read' ? 'write' : options.mode });
    // A first waiter in the waiting process subscribes to the key's releases.
    const first = countAttempts(waiter.locks);
    const firstDone = waiter.locks.using(key, () => sleep(1), { ...options, waitTimeout: 10_000 });
    await first.watching();
    first.stop();
    const attempts = countAttempts(waiter.locks);
    const second = waiter.locks.acquire(key, { ...options, waitTimeout: 10_000 });
    await attempts.answered();
    await held.release();
    const lock = await second;
    await sleep(1); // a short critical section
    await lock.release();
    await firstDone;
    await commands.stop();
    // Before: an attempt, a second one after subscribing, a renewal right after the handover
    // and the release.
    expect(callsOf(commands.seen, lock)).toHaveLength(2);
  });
});
