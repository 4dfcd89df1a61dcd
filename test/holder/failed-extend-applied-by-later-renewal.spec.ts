import { describe, expect, it } from 'vitest';
import type { LockEvent } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { useLockApps } from '../support/lock-app.js';
import { isScriptCall, watchCommands } from '../support/monitor.js';
import { useOwnRedis } from '../support/redis.js';

const TTL = 3_000;

/**
 * Found while checking a review suspicion (forty-fourth session). A lock a release hands to a
 * waiter is held on a short grant lease, renewed once a third of the way into it even with
 * `autoRenew: false` (to what is left of its ttl). `extend(ttl)` sets the lock's ttl before its
 * call goes out; when that call failed (a Redis error, or in quorum mode not confirmed), the ttl
 * stayed, and the first renewal, still due, renewed the lock to it: an extension its caller was
 * told had failed took effect a moment later (60 s here, of a lock whose ttl was 3 s).
 */
describe('a lock whose extend() failed', () => {
  const own = useOwnRedis();
  const app = useLockApps();
  const user = useAclUser(own, 'failed-extend');

  it('handed over with autoRenew: false, is renewed by its first renewal to what is left of its own ttl, not to the failed extension', { timeout: 20_000 }, async () => {
    const key = 'handed-failed-extend';
    const holder = await app({ redis: own.url() });
    const waiter = await app({ redis: user.url() });
    const events: LockEvent[] = [];
    let blocked: Promise<unknown> | undefined;
    waiter.locks.events$.subscribe((event) => {
      events.push(event);
      // The waiter's scripts fail from the moment it holds the lock (an ACL change, as a
      // transient error), before its first renewal is due a third of the way into its grant
      // lease: the command goes out now, from the event's own listener.
      if (event.type === 'acquired' && event.key === key) blocked = user.rules('-evalsha', '-eval');
    });
    const watch = await watchCommands(`lock:{${key}}`, own.url());
    const held = await holder.locks.acquire(key);
    const handed = waiter.locks.acquire(key, { ttl: TTL, autoRenew: false, waitTimeout: 10_000 });
    try {
      await expect.poll(() => own.redis().llen(`lock:{${key}}:queue`)).toBe(1);
      // Its attempt after it subscribed is in too (then it sleeps until a message wakes it): the
      // lock comes to it by the release's grant, not by an attempt of its own.
      const attempts = () => watch.seen.filter((command) => isScriptCall(command) && command.args.at(-2) === String(TTL));
      await expect.poll(() => attempts().length).toBeGreaterThanOrEqual(2);
      await held.release();
    } finally {
      await watch.stop();
    }
    const lock = await handed;
    await blocked;
    await expect(lock.extend(60_000)).rejects.toThrow(/NOPERM|permission/i);
    expect(events.filter((event) => event.type === 'renewed')).toEqual([]);
    await user.rules('+evalsha', '+eval');
    // The first renewal, tried again until Redis confirms it.
    await expect.poll(() => events.some((event) => event.type === 'renewed' && event.key === key), { timeout: 10_000 }).toBe(true);
    const pttl = await own.redis().pttl(`lock:{${key}}`);
    // Before: 59,6xx ms, the failed extension's lease.
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(TTL);
    await lock.release();
  });

  it('and a lock with a watchdog is renewed to its own ttl after it, not to the failed extension', { timeout: 20_000 }, async () => {
    const key = 'watchdog-failed-extend';
    const { lock, events } = await watchdogLockRefused(key);
    await expect(lock.extend(60_000)).rejects.toThrow(/NOPERM|permission/i);
    // Before: 59,9xx ms, the failed extension's lease, renewed so every second.
    await expectRenewedWithin(6_000, key, events);
    await lock.release();
  });

  // Found by review (forty-fourth session): the first, failing while the second was on its way,
  // gave nothing back, and the second gave back what it had found, the first's failed ttl.
  it('and so after two overlapping extend() calls that both failed, answered in the order sent', { timeout: 20_000 }, async () => {
    const key = 'overlapping-failed-extends';
    const { lock, events } = await watchdogLockRefused(key);
    const first = lock.extend(60_000);
    const second = lock.extend(90_000);
    await expect(first).rejects.toThrow(/NOPERM|permission/i);
    await expect(second).rejects.toThrow(/NOPERM|permission/i);
    // Before: 59,9xx ms, the first failed extension's lease, renewed so every second.
    await expectRenewedWithin(6_000, key, events);
    await lock.release();
  });

  /** A lock taken with a watchdog (ttl 6 s, renewed every second), whose scripts then fail. */
  async function watchdogLockRefused(key: string) {
    const { locks } = await app({ redis: user.url(), ttl: 6_000, renewInterval: 1_000 });
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    const lock = await locks.acquire(key);
    await user.rules('-evalsha', '-eval');
    return { lock, events };
  }

  /** Lets the lock's scripts run again: its next renewal leaves it at most `ttl` in Redis. */
  async function expectRenewedWithin(ttl: number, key: string, events: LockEvent[]): Promise<void> {
    await user.rules('+evalsha', '+eval');
    const from = events.length;
    await expect.poll(() => events.slice(from).some((event) => event.type === 'renewed' && event.key === key), { timeout: 10_000 }).toBe(true);
    const pttl = await own.redis().pttl(`lock:{${key}}`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(ttl);
  }
});
