import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Lock, LockEvent, LockOptions } from '../lib/index.js';
import { createLockApp, sleep, useLockApps } from './support/lock-app.js';
import { countAttempts } from './support/mechanism.js';
import { lockScriptKind, watchCommands, type SeenCommand } from './support/monitor.js';
import { startRedisServer } from './support/redis-server.js';

describe('a lock handed over on release', () => {
  const app = useLockApps();

  // A transient refusal, one asking again can cure: BUSY, Redis' answer to every call while a
  // script runs past busy-reply-threshold (NOPERM, which an earlier version of this case used, is
  // a lasting refusal since 13c11c8: the lock is told lost at once). A server of its own: the
  // script holds every caller of the server up.
  it('survives a transient error on its first renewal: it retries until its short lease ends', async () => {
    const server = await startRedisServer(['--busy-reply-threshold', '50']);
    const admin = new Redis(server.url);
    const busy = new Redis(server.url);
    try {
      const holder = await app({ redis: server.url, ttl: 30_000 });
      const waiter = await app({ redis: server.url, ttl: 30_000 });
      const events: LockEvent[] = [];
      waiter.locks.events$.subscribe((event) => events.push(event));
      const held = await holder.locks.acquire('k');
      const attempts = countAttempts(waiter.locks);
      const waiting = waiter.locks.acquire('k', { waitTimeout: 10_000 });
      // Queued and subscribed, so that the release hands the lock over.
      await attempts.watching();
      attempts.stop();
      await held.release();
      const lock = await waiting;
      const busyBefore = await busyReplies(admin);
      // Redis answers BUSY to every call for 600 ms: the first renewal of the handed-over lock,
      // due within the 1 s lease the handover started on, meets it, and is asked again.
      const looping = busy.eval('while true do end', 0).catch(() => undefined);
      await sleep(600);
      await admin.call('SCRIPT', 'KILL');
      await looping;
      // Well past the 1 s lease the handover started on.
      await sleep(1_500);
      expect(await busyReplies(admin)).toBeGreaterThan(busyBefore);
      expect(lock.signal.aborted).toBe(false);
      expect(await admin.pttl('lock:{k}')).toBeGreaterThan(25_000);
      expect(events.filter((event) => event.type === 'lost')).toEqual([]);
      await lock.release();
    } finally {
      admin.disconnect();
      busy.disconnect();
      await server.stop();
    }
  });
});

/** How many BUSY replies the server gave so far (INFO errorstats). */
async function busyReplies(admin: Redis): Promise<number> {
  return Number(/errorstat_BUSY:count=(\d+)/.exec(await admin.info('errorstats'))?.[1] ?? 0);
}

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
