import { describe, expect, it } from 'vitest';
import { firstValueFrom, filter, toArray, takeUntil, timer } from 'rxjs';
import { createLockApp, sleep } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { Redis } from 'ioredis';
import { LockLostError } from '../../lib/index.js';

// HeldLock.releaseInRedis reports a refused release as "unconfirmed" (not a loss) whenever the
// ioredis connection closed at any time between the release call and its reply. That is only
// right for a release the client had written before the connection closed (ioredis resends
// those). A release issued while the connection was already down sits in ioredis' offline queue
// and runs exactly once after the reconnect: if Redis refuses it, the lock was really taken by
// another holder, and the caller must learn so as without a reset (the lock's signal aborts with
// LockLostError 'refused', a 'lost' event), not that the release was merely unconfirmed (a
// 'released' event with unconfirmed: true, which docs/deployment.md says is "never ... a lost lock").
describe('a release issued while the ioredis connection is down, of a lock another holder took', () => {
  const own = useOwnRedis();

  async function rejected(): Promise<number> {
    const info = await own.redis().info('stats');
    return Number(/rejected_connections:(\d+)/.exec(info)![1]);
  }

  async function until(check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 600; i++) {
      if (await check()) return;
      await sleep(25);
    }
    throw new Error('condition not reached within 15 s');
  }

  it('without a reset: the lock is reported lost (control)', async () => {
    const app = await createLockApp({ redis: own.url() });
    try {
      const lock = await app.locks.acquire('taken', { ttl: 60_000 });
      await own.redis().set('lock:{taken}', 'someone-else', 'KEEPTTL');
      const lost = firstValueFrom(app.locks.events$.pipe(filter((e) => e.type === 'lost')));
      await lock.release();
      expect(await lost).toMatchObject({ key: 'taken', reason: 'refused' });
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    } finally {
      await app.close();
    }
  });

  it('with the release queued offline, then sent once: still reported lost', async () => {
    // The application's ioredis client, handed in, so that the test sees its 'close' events.
    const client = new Redis(own.url());
    client.on('error', () => undefined);
    let closes = 0;
    client.on('close', () => void (closes += 1));
    const app = await createLockApp({ redis: client as never });
    const admin = own.redis();
    try {
      const lock = await app.locks.acquire('taken', { ttl: 60_000 });
      // A genuine loss: another holder owns the key now.
      await admin.set('lock:{taken}', 'someone-else', 'KEEPTTL');
      const events = firstValueFrom(app.locks.events$.pipe(takeUntil(timer(20_000)), filter((e) => e.type === 'lost' || e.type === 'released'), toArray()));
      // The application's connection goes down and cannot come back yet (Redis refuses new clients).
      await admin.config('SET', 'maxclients', '1');
      await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await until(async () => closes >= 1 && client.status !== 'ready');
      // The release is issued while the connection is down: it waits in ioredis' offline queue.
      const released = lock.release().then(() => undefined, (e: unknown) => e);
      const queuedAt = closes;
      // Another reconnection attempt is refused (one more 'close') after the release was issued...
      await until(async () => closes > queuedAt);
      expect(await rejected()).toBeGreaterThan(0);
      // ...then Redis takes clients again: the release runs once, and is refused.
      await admin.config('SET', 'maxclients', '10000');
      const error = await released;
      // Redis ran the release once, after the reconnection, and refused it: another holder has the lock.
      expect(await admin.get('lock:{taken}')).toBe('someone-else');
      await app.close();
      const seen = await events;
      expect(seen.map((e) => e.type)).toEqual(['lost']);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(error).toBeUndefined();
    } finally {
      await admin.config('SET', 'maxclients', '10000');
      await app.close();
      client.disconnect();
    }
  }, 40_000);
});
