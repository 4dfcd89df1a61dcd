/**
 * Defect: with a GLIDE standalone client given several addresses (GLIDE finds the primary among
 * them and sends every command there), the Terminus indicator names each PING by the FIRST
 * configured address (`glide-driver.ts` `pingTargets`: `this.config.addresses[0]`), which may be
 * a replica. A frozen primary is then reported `down` under the replica's address, and a frozen
 * replica listed first is reported `up` under its own address: the operator the probe pages
 * looks at the wrong server. (An ioredis or node-redis Sentinel client is named by the master
 * it is connected to: `health-sentinel-frozen-master-not-named.spec.ts`.)
 */
import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { RedisLockHealthIndicator, type RedisLockNodeHealth } from '../../lib/terminus/index.js';
import { sleep } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { terminusLockModule } from '../support/terminus-app.js';

const portOf = (server: RedisServer) => Number(new URL(server.url).port);

describe('the terminus indicator on a GLIDE standalone client listing a replica first', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  beforeAll(async () => {
    [primary, replica] = await Promise.all([startRedisServer(), startRedisServer()]);
    const admin = new Redis(replica.url);
    await admin.replicaof('127.0.0.1', String(portOf(primary)));
    while (!/master_link_status:up/.test(await admin.info('replication'))) await sleep(50);
    admin.disconnect();
  });
  afterAll(() => Promise.all([primary.stop(), replica.stop()]));

  it('never names the frozen primary by the replica address', { timeout: 30_000 }, async () => {
    const client = await GlideClient.createClient({
      addresses: [{ host: '127.0.0.1', port: portOf(replica) }, { host: '127.0.0.1', port: portOf(primary) }],
      requestTimeout: 2_000,
    });
    const moduleRef = await terminusLockModule(client, { waitTimeout: 0 });
    try {
      // Locks work: GLIDE sends them to the primary.
      await (await moduleRef.get(LockService).acquire('glide:addresses')).release();
      const health = moduleRef.get(RedisLockHealthIndicator);
      primary.pause();
      let nodes: RedisLockNodeHealth[];
      try {
        nodes = (await health.isHealthy('locks', { showDetails: true })).locks.nodes as RedisLockNodeHealth[];
      } finally {
        primary.resume();
      }
      expect(nodes).toHaveLength(1);
      expect(nodes[0]!.status).toBe('down');
      // Down is the primary: named by its own address, or by none, never by the replica's.
      expect(nodes[0]!.address).not.toBe(`127.0.0.1:${portOf(replica)}`);
    } finally {
      await moduleRef.close();
      client.close();
    }
  });
});
