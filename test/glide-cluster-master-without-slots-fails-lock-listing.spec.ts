/**
 * Found by review (thirty-fifth session). A Valkey GLIDE Cluster client handed in, on a Cluster
 * with a master that serves no slot: a node just added (`redis-cli --cluster add-node`, or
 * `CLUSTER MEET`) and not given slots yet, or one emptied by a reshard before its removal, the
 * usual steps of scaling a Cluster out or in. The GLIDE driver took its masters from `CLUSTER
 * NODES`, that one included, and sent it the calls that must reach each master by its address;
 * GLIDE connects to the nodes `CLUSTER SLOTS` names, so it had no connection to that one and the
 * call timed out (GLIDE's `requestTimeout`). Every page of the lock board's listing failed with
 * "timed out", and the check that every master runs Redis 7 (renewals in one call per master)
 * could not succeed (an INFO to each master), so renewals went out one call per slot. ioredis and node-redis take their
 * masters from the slot map and list the locks (checked in review). The driver's masters are now
 * those that serve slots, as its health check's already were.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockManager } from '../lib/core/engine/lock-manager.js';
import { listLocks } from '../lib/core/stores/redis/lock-admin.js';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { handedLockApp, openClient } from './support/handed-clients.js';
import { useRedisCluster } from './support/redis-cluster.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

describe('a GLIDE Cluster client, with a master that serves no slot in the Cluster', () => {
  const redisCluster = useRedisCluster();
  let added: RedisServer | undefined;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'master-without-slots-'));
    added = await startRedisServer(['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--dir', dir]);
    const node = new Redis(added.url);
    try {
      await node.cluster('MEET', '127.0.0.1', redisCluster.cluster.nodes[0]!.port);
      // Known as a master (past the handshake) by every node, so whichever node answers CLUSTER NODES lists it.
      for (const { host, port } of [...redisCluster.cluster.nodes, { host: '127.0.0.1', port: Number(new URL(added.url).port) }]) {
        const peer = new Redis(port, host);
        try {
          const masters = async () => String(await peer.cluster('NODES')).split('\n').filter((line) => line.split(' ')[2]?.split(',').includes('master') && !line.includes('handshake')).length;
          for (let tries = 0; (await masters()) < 4; tries++) {
            if (tries > 200) throw new Error('the added node did not join the Cluster');
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        } finally {
          peer.disconnect();
        }
      }
    } finally {
      node.disconnect();
    }
  }, 60_000);
  afterAll(() => added?.stop());

  it('pages through the locks of every master that serves slots, and renews a watchdog batch in one call per master', { timeout: 30_000 }, async () => {
    const app = await handedLockApp(await openClient('GLIDE', redisCluster.cluster.nodes));
    const keys = Array.from({ length: 6 }, (_, i) => `scaled:${i}`);
    const held = await Promise.all(keys.map((key) => app.locks.acquire(key)));
    try {
      const manager = app.locks[LOCK_RUNNER] as LockManager;
      const seen: string[] = [];
      let cursor = '0';
      let pages = 0;
      do {
        const page = await listLocks(manager, cursor, 2);
        seen.push(...page.locks.map((lock) => lock.key));
        cursor = page.cursor;
      } while (cursor !== '0' && ++pages < 200);
      expect([...new Set(seen)].sort()).toEqual(keys);
      const handed = await openClient('GLIDE', redisCluster.cluster.nodes);
      try {
        // Learns that every master runs Redis 7 (an INFO to each).
        expect(await new LockScripts(handed.client as never).perMasterRenewals()).toBe(true);
      } finally {
        handed.close();
      }
    } finally {
      await Promise.all(held.map((lock) => lock.release()));
      await app.close();
    }
  });
});
