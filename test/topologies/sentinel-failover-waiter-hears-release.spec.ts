import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { describe, it, type ExpectStatic } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { createSentinel as createSentinel6 } from 'redis';
import { createSentinel as createSentinel5 } from 'redis5';
import { createLockApp, sleep } from '../support/lock-app.js';
import type { Factory } from '../support/node-redis.js';
import { countAttempts, expectWokenByGrant, recordWakes } from '../support/mechanism.js';
import { subscribers } from '../support/redis.js';

/**
 * A waiter subscribed to a lock's release channel on the master, then a REAL Sentinel failover
 * (ioredis Sentinel options, failoverDetector). The release, sent to the new master, must reach
 * the waiter through its release subscription, which has to follow the new master: the release
 * is sent right after one of the waiter's polls was answered, and the waiter must be woken by
 * the release's grant message before any attempt (a poll would have come first).
 */
type Opened = { redis: unknown; close: () => unknown };
const CLIENTS: Record<string, (deployment: SentinelDeployment) => Promise<Opened>> = {
  // failoverDetector: ioredis follows +switch-master at once (docs/deployment.md).
  ioredis: async (deployment) => ({ redis: { sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true }, close: () => undefined }),
  // An iovalkey client handed to the module (it has no Sentinel options of its own there).
  iovalkey: async (deployment) => {
    const client = new Valkey({ sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true });
    client.on('error', () => undefined);
    return { redis: client, close: () => client.disconnect() };
  },
  'node-redis 6': async (deployment) => {
    const client = (createSentinel6 as unknown as Factory)({ name: deployment.name, sentinelRootNodes: deployment.sentinels });
    client.on('error', () => undefined);
    await client.connect();
    return { redis: client, close: () => client.close() };
  },
  'node-redis 5': async (deployment) => {
    const client = (createSentinel5 as unknown as Factory)({ name: deployment.name, sentinelRootNodes: deployment.sentinels });
    client.on('error', () => undefined);
    await client.connect();
    return { redis: client, close: () => client.close() };
  },
};
const ONLY = process.env.CLIENTS?.split(',');

// Each client on a deployment of its own, side by side: most of a case is waiting (the
// deployment's start, the failover), which four in a row spent one after the other.
describe.concurrent('Sentinel: a waiter hears the release after a real failover', () => {
  it.for(Object.keys(CLIENTS).filter((name) => ONLY === undefined || ONLY.includes(name)))('%s: waiter subscribed before the failover gets the lock by the release message sent to the new master', { timeout: 150_000 }, async (name, { expect }) => {
    const deployment = await startSentinelDeployment();
    try {
      await waiterHearsRelease(name, deployment, expect);
    } finally {
      await deployment.stop();
    }
  });
});

async function waiterHearsRelease(name: string, deployment: SentinelDeployment, expect: ExpectStatic): Promise<void> {
  const clients = [await CLIENTS[name]!(deployment), await CLIENTS[name]!(deployment)];
  const holder = await createLockApp({ redis: clients[0]!.redis as never, ttl: 5_000, renewInterval: 300 });
  const waiter = await createLockApp({ redis: clients[1]!.redis as never, ttl: 5_000, renewInterval: 300 });
  const key = `sentinel-failover-waiter:${name.replace(/\W/g, '')}`;
  try {
    const held = await holder.locks.acquire(key);
    const attempts = countAttempts(waiter.locks);
    const wakes = recordWakes(waiter.locks);
    const waiting = waiter.locks.acquire(key, { waitTimeout: 60_000 });
    waiting.catch(() => undefined);
    const oldPort = await deployment.masterPortNow();
    const oldMaster = new Redis(oldPort, '127.0.0.1');
    const replica = new Redis(oldPort === deployment.masterPort ? deployment.replicaPort : deployment.masterPort, '127.0.0.1');
    // The waiter is subscribed on the master and queued, and the replica has the lock and the queue.
    await expect.poll(() => subscribers(oldMaster, `lock:{${key}}:released`), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => replica.exists(`lock:{${key}}`, `lock:{${key}}:queue`), { timeout: 10_000 }).toBe(2);
    replica.disconnect();
    oldMaster.disconnect();

    const newPort = await deployment.failover();
    expect(newPort).not.toBe(oldPort);
    const promoted = new Redis(newPort, '127.0.0.1');
    try {
      // The waiter's subscription followed the new master.
      await expect.poll(() => subscribers(promoted, `lock:{${key}}:released`), { timeout: 20_000 }).toBe(1);
      // The holder's renewals reach the new master (its connection followed too): the PTTL rises
      // between two reads. (Against one fixed first read, a read that came just after a renewal
      // left a window of a millisecond or two in every 300 ms, and the poll missed it.)
      let lastPttl = await promoted.pttl(`lock:{${key}}`);
      await expect.poll(async () => {
        const pttl = await promoted.pttl(`lock:{${key}}`);
        const rose = pttl > lastPttl;
        lastPttl = pttl;
        return rose;
      }, { timeout: 10_000 }).toBe(true);
      expect(held.held).toBe(true);

      // Release right after one of the waiter's polls is answered: its next one is 250 ms away.
      await attempts.answered();
      const attemptsBefore = attempts.count;
      const stepsBefore = wakes.steps.length;
      await held.release();
      // The release handed the lock to the waiter on the new master...
      expect(await promoted.exists(`lock:{${key}}`)).toBe(1);
      // ...and the waiter learns it by the message alone (polls held: no attempt).
      const next = await Promise.race([waiting, sleep(20_000).then(() => 'not woken' as const)]);
      // A waiter the failover cost its place (its queue keys expired while its refreshes could
      // not reach a master) confirms the grant with one attempt.
      await expectWokenByGrant(expect, next, held, wakes, stepsBefore, attempts, attemptsBefore);
      expect(await promoted.exists(`lock:{${key}}`)).toBe(0);
    } finally {
      promoted.disconnect();
    }
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
    for (const client of clients) await client.close();
  }
}
