import { describe, expect, it } from 'vitest';
import type { Lock, LockEvent } from '../lib/index.js';
import { useAclUser } from './support/acl-user.js';
import { useLockApps } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';

/**
 * Found by review: extend(ttl) set the lock's ttl before its renewal was sent (so that a watchdog
 * renewal in flight does not shorten the lease) but rescheduled the watchdog for ttl / 3 only
 * after Redis confirmed it. An extend() that failed (a transient Redis
 * error; in quorum mode "not enough Redis nodes answered, it is still held") kept the new,
 * shorter ttl but the old, longer watchdog interval: every later renewal renewed to the short ttl
 * while the next one came only an old interval later, so the lock lapsed while its holder ran.
 */
describe('extend() that fails, or is retried, with a shorter ttl', () => {
  const own = useOwnRedis();
  const app = useLockApps();
  const user = useAclUser(own, 'review-extend');

  /** A lock (ttl 6 s, renewed every 2 s) whose extend(1_000) failed: its scripts were refused for a moment. */
  async function afterFailedExtend(key: string): Promise<{ lock: Lock; events: LockEvent[] }> {
    const { locks } = await app({ redis: user.url(), ttl: 6_000, renewInterval: 2_000 });
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    const lock = await locks.acquire(key);
    // The lock's scripts fail for a moment (an ACL change, as a transient error): extend() rejects.
    await user.rules('-evalsha', '-eval');
    await expect(lock.extend(1_000)).rejects.toThrow(/NOPERM|permission/i);
    await user.rules('+evalsha', '+eval');
    return { lock, events };
  }

  /**
   * Waits for the watchdog's next three renewals of `lock` (events after the first `from`), or a
   * loss before them: each renewal Redis took found the lease alive. With the old interval (2 s)
   * and the short lease (1 s), the first renewal comes after the lease ran out, and the lock is
   * lost instead. Counted, not slept over: two of the old intervals were 5 s of sleep.
   */
  async function nextRenewals(lock: Lock, events: LockEvent[], from: number): Promise<string[]> {
    const outcomes = () => events.slice(from).filter((event) => event.key === lock.key && (event.type === 'renewed' || event.type === 'lost')).map((event) => event.type);
    await expect.poll(() => outcomes().includes('lost') || outcomes().length >= 3, { timeout: 10_000 }).toBe(true);
    return outcomes();
  }

  it('does not leave the lock renewed to the short ttl at the old interval (it must not lapse while held)', async () => {
    const { lock, events } = await afterFailedExtend('extend-fails');
    // Redis is healthy again. Whatever ttl the lock now has, its watchdog must keep it: its next
    // renewals each find it still held, and nothing was reported lost.
    expect(await nextRenewals(lock, events, events.length)).toEqual(['renewed', 'renewed', 'renewed']);
    expect(events.filter((event) => event.type === 'lost')).toEqual([]);
    expect(lock.signal.aborted).toBe(false);
    expect(lock.held).toBe(true);
    expect(await own.redis().pttl('lock:{extend-fails}')).toBeGreaterThan(0);
    await lock.release();
  });

  it('a retried extend() of the same shorter ttl that succeeds renews every ttl / 3 (the lock must not lapse)', async () => {
    const { lock, events } = await afterFailedExtend('extend-retried');
    // The caller retries, as one does after a transient error, and this time Redis confirms:
    // the docs promise a lease of 1 s renewed every ttl / 3 from now on.
    await lock.extend(1_000);
    // The extend's own renewal is reported before it resolves: the watchdog's come after it.
    expect(await nextRenewals(lock, events, events.length)).toEqual(['renewed', 'renewed', 'renewed']);
    expect(events.filter((event) => event.type === 'lost')).toEqual([]);
    expect(lock.held).toBe(true);
    await lock.release();
  });
});
