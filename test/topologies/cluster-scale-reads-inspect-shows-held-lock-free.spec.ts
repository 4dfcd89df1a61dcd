import { GlideClusterClient } from '@valkey/valkey-glide';
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6 } from 'ioredis6';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { startReplicatedCluster, type ReplicatedCluster } from '../support/replicated-cluster.js';

/**
 * An ioredis `Cluster` handed in with `scaleReads: 'slave'` (or `'all'`, or a function), or a GLIDE
 * cluster client with `readFrom: 'preferReplica'`, so that the application's own reads go to
 * replicas: `inspect()` (and the lock board, which reads the same way) sent its plain GET / PTTL /
 * ZCARD there too, and a replica that had not applied the acquire yet reported a lock held by
 * this very process as free. The library's reads go to the slot's master, as its scripts do. The
 * replica is held behind on purpose: `CLIENT PAUSE WRITE` on it stops it applying its master's
 * stream while it still answers reads.
 */
describe('Cluster client reading from replicas: inspect() reads the master', () => {
  let cluster: ReplicatedCluster;
  beforeAll(async () => {
    cluster = await startReplicatedCluster();
  }, 60_000);
  afterAll(() => cluster?.stop());

  type Opened = { client: unknown; close: () => unknown };
  type ScaledCluster = { on(event: 'error', listener: () => void): unknown; disconnect(): void };

  /** An ioredis-family Cluster client of `Client` with `scaleReads`. */
  const scaled =
    (Client: new (nodes: ReplicatedCluster['nodes'], options: { scaleReads: 'slave' | 'all' }) => ScaledCluster, scaleReads: 'slave' | 'all') =>
    async (): Promise<Opened> => {
      const client = new Client(cluster.nodes, { scaleReads });
      client.on('error', () => undefined);
      return { client, close: () => client.disconnect() };
    };

  /** Each client, reading from replicas as the application configured it. */
  const CLIENTS: Record<string, () => Promise<Opened>> = {
    "ioredis scaleReads: 'slave'": scaled(Cluster, 'slave'),
    "ioredis scaleReads: 'all'": scaled(Cluster, 'all'),
    "ioredis 6 scaleReads: 'slave'": scaled(Cluster6, 'slave'),
    "iovalkey scaleReads: 'slave'": scaled(ValkeyCluster, 'slave'),
    "GLIDE readFrom: 'preferReplica'": async () => {
      const client = await GlideClusterClient.createClient({ addresses: cluster.nodes, requestTimeout: 2_000, readFrom: 'preferReplica' });
      return { client, close: () => client.close() };
    },
  };

  it.each(Object.keys(CLIENTS))('%s', { timeout: 30_000 }, async (name) => {
    const key = `scaled-${Object.keys(CLIENTS).indexOf(name)}`;
    const { replica } = await cluster.shardOf(clusterSlot(`lock:{${key}}`));
    const client = await CLIENTS[name]!();
    const behind = new Redis(replica, '127.0.0.1');
    const app = await createLockApp({ redis: client.client as RedisLockModuleOptions['redis'] });
    try {
      // READONLY: this connection reads the replica's own data, as a scaled read does.
      await behind.call('READONLY');
      expect(await behind.call('CLIENT', 'PAUSE', '10000', 'WRITE')).toBe('OK');
      const held = await app.locks.acquire(key);
      // The replica has not applied it: a read there says free.
      expect(await behind.get(`lock:{${key}}`)).toBeNull();
      // 'all' picks master or replica at random per read: several reads, every one must see it.
      for (let i = 0; i < 8; i++) {
        const seen = await app.locks.inspect(key);
        expect(seen.held, `inspect() #${i + 1}`).toBe(true);
        expect(seen.fencingToken).toBe(held.fencingToken);
      }
      await held.release();
    } finally {
      await behind.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      behind.disconnect();
      await app.close();
      await client.close();
    }
  });
});
