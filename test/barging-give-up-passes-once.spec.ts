import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

type Watch = { ready: Promise<void>; takeGrant(): number | undefined; passOn(): void; close(): void };
type Notifier = {
  watch(channel: string, token: string, racesFreed: boolean): Watch;
  channels: Map<string, { waiters: Map<string, { holdsFree: boolean }> }>;
};
const notifierOf = (locks: LockService) => (locks[LOCK_RUNNER] as unknown as { notifier: Notifier }).notifier;

/**
 * Found by review: a barging waiter that gives up while it holds a freed-lock wake-up it has not
 * used (the message came while its attempt was in flight) passes the wake-up on when it gives up
 * (`passOn`), and again when its watch closes (it still held the unused wake-up): two siblings
 * raced for one freed lock where one should, an extra attempt for each such give-up.
 */
describe('a barging waiter that gives up holding an unused freed-lock wake-up', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('passes it on to one sibling, not two', async () => {
    const { locks } = await app({ fairness: 'barging' });
    const channel = `lock:{give-up-${randomUUID().slice(0, 8)}}:released`;
    const notifier = notifierOf(locks);
    const [first, second, third] = ['t1', 't2', 't3'].map((token) => notifier.watch(channel, token, true)) as [Watch, Watch, Watch];
    try {
      await first.ready;
      // The freed-lock message reaches the process while no wait listens: the first watcher keeps it.
      await redis.publish(channel, '*');
      await expect.poll(() => notifier.channels.get(channel)?.waiters.get('t1')?.holdsFree, { timeout: 5_000 }).toBe(true);
      // The first watcher's call gives up: it passes the wake-up on, and its watch closes.
      first.passOn();
      first.close();
      const woken = [second.takeGrant(), third.takeGrant()].filter((grant) => grant === 0);
      expect(woken).toHaveLength(1);
    } finally {
      second.close();
      third.close();
    }
  });
});
