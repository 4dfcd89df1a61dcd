/**
 * Found by review. A node-redis Sentinel client (5 and 6), its master killed and the replica
 * promoted. A waiter that gives up while no master answers (its `waitTimeout` ends) has its
 * release channel given up: the driver's UNSUBSCRIBE waits in node-redis' queue for the master,
 * and node-redis rejects it ("Disconnects client") when it moves its pub/sub connection to the
 * new master, yet keeps the channel's listener and subscribes it there. Nothing gave it up
 * again: the channel stayed subscribed for the application's life (each release of that key
 * sent to this process for nothing; one more per key given up in an outage), and with node-redis
 * 5, whose release messages share the application's own client, even after `app.close()`.
 * The ioredis driver sends its UNSUBSCRIBE once reconnected, and the node-redis driver gives a
 * plain client's channels up again once it reconnects; a Sentinel client's channel was not.
 */
import { Redis } from 'ioredis';
import { createSentinel as createSentinel6 } from 'redis';
import { createSentinel as createSentinel5 } from 'redis5';
import { describe, it, type ExpectStatic } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { LockNotAcquiredError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import type { Factory } from '../support/node-redis.js';
import { subscribers } from '../support/redis.js';

const FACTORIES: Record<string, Factory> = {
  'node-redis 6': createSentinel6 as unknown as Factory,
  'node-redis 5': createSentinel5 as unknown as Factory,
};

// Each client on a deployment of its own, side by side: most of a case is waiting (the
// deployment's start, the promotion), which the two spent one after the other.
describe.concurrent('Sentinel: a channel given up while the master is down', () => {
  it.for(Object.keys(FACTORIES))('%s: is not subscribed on the promoted replica', { timeout: 150_000 }, async (name, { expect }) => {
    const deployment = await startSentinelDeployment();
    try {
      await notSubscribedOnPromoted(name, deployment, expect);
    } finally {
      await deployment.stop();
    }
  });
});

async function notSubscribedOnPromoted(name: string, deployment: SentinelDeployment, expect: ExpectStatic): Promise<void> {
  const client = FACTORIES[name]!({ name: deployment.name, sentinelRootNodes: deployment.sentinels });
  client.on('error', () => undefined);
  await client.connect();
  const app = await createLockApp({ redis: client as never, ttl: 15_000, renewInterval: 500 });
  const tag = name.replace(/\W/g, '');
  const [kept, gaveUp] = [`kept:${tag}`, `gave-up:${tag}`];
  const oldPort = await deployment.masterPortNow();
  const oldMaster = new Redis(oldPort, '127.0.0.1');
  const pid = Number(/process_id:(\d+)/.exec(await oldMaster.info('server'))![1]);
  let promoted: Redis | undefined;
  try {
    try {
      const held = [await app.locks.acquire(kept), await app.locks.acquire(gaveUp)];
      const waiting = app.locks.acquire(kept, { waitTimeout: 60_000 });
      waiting.catch(() => undefined);
      const givingUp = app.locks.acquire(gaveUp, { waitTimeout: 1_500 });
      givingUp.catch(() => undefined);
      for (const key of [kept, gaveUp]) await expect.poll(() => subscribers(oldMaster, `lock:{${key}}:released`), { timeout: 10_000 }).toBe(1);
      oldMaster.disconnect();

      process.kill(pid, 'SIGKILL');
      // Given up while no master answers (the promotion takes ~2 s after the kill here).
      await expect(givingUp).rejects.toBeInstanceOf(LockNotAcquiredError);
      await expect.poll(() => deployment.masterPortNow(), { timeout: 30_000, interval: 100 }).not.toBe(oldPort);
      promoted = new Redis(await deployment.masterPortNow(), '127.0.0.1');
      // The pub/sub connection followed: the channel still waited on is subscribed there.
      await expect.poll(() => subscribers(promoted!, `lock:{${kept}}:released`), { timeout: 20_000 }).toBe(1);
      // Before the fix: 1, for as long as the application ran.
      await expect.poll(() => subscribers(promoted!, `lock:{${gaveUp}}:released`), { timeout: 5_000 }).toBe(0);

      for (const lock of held) await lock.release();
      await (await waiting).release();
    } finally {
      await app.close();
    }
    // The application's own client (node-redis 5 shares its pub/sub connection) keeps no lock channel.
    await expect.poll(async () => (await promoted!.pubsub('CHANNELS', 'lock:*')) as string[], { timeout: 5_000 }).toEqual([]);
  } finally {
    promoted?.disconnect();
    await client.close();
  }
}
