/**
 * Found by review of 30fc9c8 (a release channel given up while a node-redis Sentinel client's
 * master is down is given up again on the promoted master). node-redis 5's Sentinel client
 * cannot be duplicated: the module's release messages share the application's own pub/sub
 * connection, and `app.close()` takes each subscription back (the shared subscriber's close()).
 * That close sent its UNSUBSCRIBE once, without the retry 30fc9c8 gave `unsubscribe()`: closed
 * while the master was down (a waiter's channel lingering, as it does for a second after its
 * last waiter left), node-redis rejected it as it moved to the promoted master, kept the
 * module's listener and subscribed the channel there. The application's client, still open
 * after `app.close()` (it is its owner's), kept the lock's channel and the closed module's
 * listener.
 */
import { Redis } from 'ioredis';
import { createSentinel as createSentinel5 } from 'redis5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { createLockApp } from '../support/lock-app.js';
import { subscribers } from '../support/redis.js';

describe('node-redis 5 Sentinel: app.close() while the master is down, a channel subscribed', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  it('leaves no lock channel subscribed on the promoted master', { timeout: 90_000 }, async () => {
    const client = createSentinel5({ name: deployment.name, sentinelRootNodes: deployment.sentinels });
    client.on('error', () => undefined);
    await client.connect();
    const app = await createLockApp({ redis: client as never, ttl: 15_000, shutdownTimeout: '200ms' });
    const key = 'closed-in-failover';
    const channel = `lock:{${key}}:released`;
    const oldPort = await deployment.masterPortNow();
    const oldMaster = new Redis(oldPort, '127.0.0.1');
    const pid = Number(/process_id:(\d+)/.exec(await oldMaster.info('server'))![1]);
    let promoted: Redis | undefined;
    let closed = false;
    try {
      // Another process holds the lock: this application waits for it, on the release channel.
      await oldMaster.set(`lock:{${key}}`, 'someone-else', 'PX', 60_000);
      // The application's own subscription: once it is on the promoted master, so is every
      // channel node-redis moved there with it.
      await (client as unknown as { subscribe(channel: string, listener: () => void): Promise<void> }).subscribe('probe', () => undefined);
      const waiting = app.locks.acquire(key, { waitTimeout: 60_000 });
      waiting.catch(() => undefined);
      await expect.poll(() => subscribers(oldMaster, channel), { timeout: 10_000 }).toBe(1);
      oldMaster.disconnect();

      process.kill(pid, 'SIGKILL');
      // Closed while no master answers: the wait ends, its channel lingers, and close() gives it up.
      await app.close();
      closed = true;
      await expect.poll(() => deployment.masterPortNow(), { timeout: 30_000, interval: 100 }).not.toBe(oldPort);
      promoted = new Redis(await deployment.masterPortNow(), '127.0.0.1');
      // node-redis moves its pub/sub connection to the promoted master (the client is still open).
      await expect.poll(() => subscribers(promoted!, 'probe'), { timeout: 20_000 }).toBe(1);
      // Before the fix: the lock's channel, for as long as the client stayed open.
      await expect.poll(async () => (await promoted!.pubsub('CHANNELS', 'lock:*')) as string[], { timeout: 5_000 }).toEqual([]);
    } finally {
      if (!closed) await app.close();
      promoted?.disconnect();
      await client.close();
    }
  });
});
