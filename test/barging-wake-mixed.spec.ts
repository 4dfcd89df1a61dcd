import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Lock, LockOptions, LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { countAttempts, holdPolls, recordWakes } from './support/mechanism.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;
type Inbox = { freed: boolean };
type Notifier = { channels: Map<string, { live: boolean; waiters: Map<string, Inbox> }>; subscribed(channel: string): boolean };

const notifierOf = (locks: LockService) => (locks[LOCK_RUNNER] as unknown as { notifier: Notifier }).notifier;

/**
 * Holds back the next acquire attempt of `locks` made with `enqueue === true` (a FIFO waiter's, a
 * reader's) until `open()`: its call has already registered its watch (watchAhead runs in
 * `send()` before `host.attempt`), so it sits in the channel's waiters while its attempt has not
 * reached Redis yet, as an attempt in flight does.
 */
function gateNextQueueingAttempt(locks: LockService): { open(): void; held: Promise<void> } {
  const manager = locks[LOCK_RUNNER] as unknown as { attempt: Attempt };
  const original = manager.attempt;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let heldResolve!: () => void;
  const held = new Promise<void>((resolve) => (heldResolve = resolve));
  let armed = true;
  manager.attempt = function (this: unknown, ...args: unknown[]) {
    if (armed && args[4] === true) {
      armed = false;
      heldResolve();
      return gate.then(() => original.apply(this, args));
    }
    return original.apply(this, args);
  };
  return { open: () => open(), held };
}

/**
 * Found by review. A release that frees a lock for barging waiters publishes `*` once (and deletes `P{K}:wanted`);
 * each process hands it to ONE of its watchers on the channel (`freeOne`). Since d03e704 every
 * attempt of a process subscribed to the channel watches ahead, the first attempt of a FIFO call
 * (or of a reader) included, so such a call can be that one watcher while its first attempt is
 * still on its way. A FIFO rule never passes a wake-up on (`passesOn: false`) and its attempts
 * never set `P{K}:wanted` again: when that attempt finds the lock taken (a greedy holder took it
 * back first) the barging waiter of the process is never told of any later release. With its
 * polls held, it slept while the lock was free. Now only barging waiters are woken by `*`.
 */
describe('a freed-lock wake-up in a process whose FIFO or read-lock caller watches ahead', () => {
  const redis = useRedis();
  const app = useLockApps();

  it.each<[string, LockOptions]>([
    ['a FIFO mutex call', { fairness: 'fifo' }],
    ['a read-lock call', { mode: 'read' }],
  ])('is not lost for the barging waiter of the process when %s watched ahead of its first attempt', async (_what, fifoOptions) => {
    const holder = await app({ ttl: 30_000 });
    const waiters = await app({ ttl: 30_000 });
    const key = `review-wake-${randomUUID().slice(0, 8)}`;
    const lockKey = `lock:{${key}}`;
    const channel = `${lockKey}:released`;
    const notifier = notifierOf(waiters.locks);

    // The waiting process subscribes to the key's channel once (a waiter handed the lock), and
    // the channel lingers live after it (43b3b1c).
    let held = await holder.locks.acquire(key);
    const warm = countAttempts(waiters.locks);
    const first = waiters.locks.acquire(key, { waitTimeout: 10_000 });
    await warm.watching();
    warm.stop();
    await held.release();
    await (await first).release();
    expect(notifier.subscribed(channel)).toBe(true);

    // The other process holds the lock again (fast path: nobody queues).
    held = await holder.locks.acquire(key);
    holdPolls(waiters.locks);
    const wakes = recordWakes(waiters.locks);
    const attempts = countAttempts(waiters.locks);

    // F (FIFO or reader) watches ahead, and its first attempt is on its way (held back here).
    const gate = gateNextQueueingAttempt(waiters.locks);
    let fLock: Lock | undefined;
    const f = waiters.locks.acquire(key, { ...fifoOptions, waitTimeout: 20_000 });
    void f.then((lock) => (fLock = lock), () => undefined);
    await gate.held;

    // W, a barging waiter of the same process, asks: busy, it says it waits (P{K}:wanted).
    let wLock: Lock | undefined;
    const w = waiters.locks.acquire(key, { fairness: 'barging', waitTimeout: 20_000 });
    void w.then((lock) => (wLock = lock), () => undefined);
    await attempts.listening();
    expect(await redis.exists(`${lockKey}:wanted`)).toBe(1);

    // The holder releases: the lock is freed for barging waiters, `*` goes out once. It is W's,
    // the one that said it waits, not F's, whose watch came first (F would spend it on nothing).
    await held.release();
    // Polls are held: only the wake-up can serve W.
    await expect.poll(() => wLock !== undefined, { timeout: 5_000 }).toBe(true);
    expect(wakes.steps).toContain('freed');
    expect([...(notifier.channels.get(channel)?.waiters.values() ?? [])].some((inbox) => inbox.freed)).toBe(false);

    // F's attempt reaches Redis: busy, F queues; W's release hands the lock to F.
    gate.open();
    await wLock!.release();
    await expect.poll(() => fLock !== undefined, { timeout: 5_000 }).toBe(true);
    await fLock!.release();
    expect(await redis.exists(lockKey)).toBe(0);
  });
});
