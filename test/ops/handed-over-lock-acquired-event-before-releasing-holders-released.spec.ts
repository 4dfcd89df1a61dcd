/**
 * Found by review (forty-third session): in one process, a holder's release that hands the lock
 * to a waiter of the same process (FIFO handoff) could be told in the wrong order: the grant
 * comes on the subscriber connection, the release's reply on the command connection, and when
 * the grant was read first the waiter's `acquired` event (on `events$` and its diagnostics
 * channel) came before the holder's `released`. The board's feed and a log correlating events
 * showed two holders of one mutex (6 handoffs in 100 on a quiet machine).
 *
 * Promise (docs/observability.md, "Diagnostics channels"): in one process, the events of a key
 * whose lock one holder hands to the next come in the order they happened in Redis: the
 * holder's `released`, then the next holder's `acquired`.
 *
 * Deterministic: the holder's release reply is held back (in the test's wrapper of the store)
 * until the waiter has been handed the grant by the release message and has done all it does
 * with it while the reply is held.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { LOCK_DIAGNOSTICS_CHANNELS, type Lock, type LockEvent, type LockService } from '../../lib/index.js';
import { holdNextReleaseReply } from '../support/held-release-reply.js';
import { countAttempts, holdPolls, recordWakes } from '../support/mechanism.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * `first`, held in `locks`, is released while a waiter of the same application sleeps on `key`
 * (its polls held: only the release's message can wake it), the release's reply held back: resolves
 * once that message handed the waiter the lock. `next` is the waiter's call.
 */
async function releaseToWaiter(locks: LockService, first: Lock, key: string) {
  const wakes = recordWakes(locks);
  const attempts = countAttempts(locks);
  const polls = holdPolls(locks);
  const next = locks.acquire(key, { ttl: '30s', waitTimeout: '30s' });
  await attempts.listening();
  const reply = holdNextReleaseReply(locks);
  const released = first.release();
  await expect.poll(() => wakes.steps.includes('granted'), { timeout: 5_000 }).toBe(true);
  expect(reply.held()).toBe(true);
  return {
    next,
    released,
    reply,
    attempts,
    polls,
    stop(): void {
      wakes.stop();
      attempts.stop();
      polls.resume();
    },
  };
}

describe('a lock handed over between two holders of one process', () => {
  useRedis();
  const app = useLockApps();

  it("tells the holder's released before the next holder's acquired, on events$ and the channels", async () => {
    const { locks } = await app();
    const told: string[] = [];
    locks.events$.subscribe((event: LockEvent) => {
      if (event.type === 'acquired' || event.type === 'released') told.push(`events$ ${event.type} ${event.fencingToken}`);
    });
    const onChannel = (message: unknown): void => {
      const event = message as LockEvent & { fencingToken: number };
      if (event.key === 'handed') told.push(`channel ${event.type} ${event.fencingToken}`);
    };
    subscribe(LOCK_DIAGNOSTICS_CHANNELS.acquired, onChannel);
    subscribe(LOCK_DIAGNOSTICS_CHANNELS.released, onChannel);
    try {
      const first = await locks.acquire('handed', { ttl: '30s' });
      told.length = 0;
      const handing = await releaseToWaiter(locks, first, 'handed');
      // All the waiter does with the grant without the reply (microtasks, no I/O) is done by now.
      await new Promise((resolve) => setImmediate(resolve));
      handing.reply.deliver();
      await handing.released;
      const second = await handing.next;
      handing.stop();
      await second.release();
      const [a, b] = [first.fencingToken, second.fencingToken];
      // Failed: the next holder's acquired (b) first, then the holder's released (a).
      expect(told.slice(0, 4)).toEqual([`events$ released ${a}`, `channel released ${a}`, `events$ acquired ${b}`, `channel acquired ${b}`]);
    } finally {
      unsubscribe(LOCK_DIAGNOSTICS_CHANNELS.acquired, onChannel);
      unsubscribe(LOCK_DIAGNOSTICS_CHANNELS.released, onChannel);
    }
  }, 30_000);

  it('still hands the lock to the waiter when the release reply does not come', async () => {
    const { locks } = await app();
    const feed = locks.events$.subscribe();
    const first = await locks.acquire('handed-unanswered', { ttl: '30s' });
    const handing = await releaseToWaiter(locks, first, 'handed-unanswered');
    const attemptsAtGrant = handing.attempts.count;
    // The waiter's timers were held since before its wait (no poll); armed now: its wait for the reply among them.
    handing.polls.resume();
    const second = await handing.next;
    // Handed out on the grant alone, once its wait for the reply ran out, with no attempt since.
    expect(handing.attempts.count).toBe(attemptsAtGrant);
    expect(second.held).toBe(true);
    handing.reply.deliver();
    await handing.released;
    handing.stop();
    await second.release();
    feed.unsubscribe();
  }, 30_000);
});
