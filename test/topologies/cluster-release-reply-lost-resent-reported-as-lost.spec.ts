import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRedisCluster } from '../support/redis-cluster.js';
import { createLockApp } from '../support/lock-app.js';
import { ReplyEater } from './support/reply-eater.js';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';

/**
 * docs/deployment.md: ioredis "sends such a command again once it reconnects: a release whose
 * first run had already released (or handed over) the lock is then answered 'not the owner',
 * which is reported as an unconfirmed release ..., never as a lost lock". The check behind it
 * (IoRedisDriver.connectionResets, lib/core/stores/redis/drivers/ioredis-driver.ts) counts the
 * 'close' events of a plain client only: "A Cluster's node connections are not counted". Here an
 * ioredis Cluster (the default client kind on a Cluster) loses the reply of a release with its
 * node connection (a proxy eats it and cuts the connection, as test/topologies/
 * release-reply-lost-resent-reported-as-lost.spec.ts does for one server).
 */
describe('ioredis Cluster: a release whose reply is lost with its node connection', () => {
  const redisCluster = useRedisCluster();
  const proxies: ReplyEater[] = [];
  let client: Cluster;

  beforeAll(async () => {
    const natMap: Record<string, { host: string; port: number }> = {};
    for (const { host, port } of redisCluster.cluster.nodes) {
      const proxy = await ReplyEater.start(port);
      proxies.push(proxy);
      natMap[`${host}:${port}`] = { host: '127.0.0.1', port: proxy.port };
    }
    client = new Cluster(redisCluster.cluster.nodes.map((_, i) => ({ host: '127.0.0.1', port: proxies[i]!.port })), { natMap });
    client.on('error', () => undefined);
    await client.ping();
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    for (const proxy of proxies) await proxy.close();
  });

  it('is never reported as a lost lock', { timeout: 60_000 }, async () => {
    const app = await createLockApp({ redis: client as never, ttl: 30_000 });
    try {
      // Warm up on the same key, so its master has the scripts cached (an eaten NOSCRIPT would prove nothing).
      await (await app.locks.acquire('mid-release-cluster')).release();
      const events: string[] = [];
      const sub = app.locks.events$.subscribe((event) => events.push(event.type));
      const lock = await app.locks.acquire('mid-release-cluster');
      // The proxy of the master that serves the key's slot loses the next reply it carries.
      const slot = clusterSlot('lock:{mid-release-cluster}');
      const ranges = (await redisCluster.admin.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
      const port = ranges.find(([from, to]) => slot >= from && slot <= to)![2][1];
      const proxy = proxies[redisCluster.cluster.nodes.findIndex((node) => node.port === port)]!;
      const before = proxy.eaten;
      proxy.armed = true;
      const outcome = await lock.release().then(
        () => 'resolved',
        (error: Error) => `rejected: ${error.message}`,
      );
      // The release's reply was the one eaten (nothing else was on its way).
      expect(proxy.eaten).toBe(before + 1);
      expect(proxy.eatenText.at(-1)).toMatch(/^:|^\*/);
      // The release ran in Redis.
      expect(await redisCluster.admin.exists('lock:{mid-release-cluster}')).toBe(0);
      sub.unsubscribe();
      expect({ outcome: outcome.startsWith('resolved') || outcome.startsWith('rejected'), events, aborted: lock.signal.aborted, errors: app.logs.lines.filter((line) => line.level === 'error').map((line) => line.message) }).toEqual({
        outcome: true,
        events: ['acquired', 'released'],
        aborted: false,
        errors: [],
      });
    } finally {
      await app.close();
    }
  });
});
