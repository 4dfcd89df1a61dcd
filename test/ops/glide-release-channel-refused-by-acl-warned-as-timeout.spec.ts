import { GlideClusterClient } from '@valkey/valkey-glide';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAclUser } from '../support/acl-user.js';
import { CLUSTER_ACL_RULES, LOCK_ACL } from '../support/least-privilege-acl.js';
import { useRedisCluster } from '../support/redis-cluster.js';
import { useLockApps } from '../support/lock-app.js';
import { CLIENTS_ON_URL } from '../support/clients-on-url.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * docs/deployment.md, "Least-privilege Redis user": a Redis user without the release channels
 * (`resetchannels`, Redis 7's default for a new user) has its waiters' SUBSCRIBE refused (NOPERM);
 * they poll, and the warning says the subscription was refused, why (the ACL) and what to grant.
 *
 * Found by review (session 50): through Valkey GLIDE the warning said only that the channel "could
 * not be subscribed within 250 ms", then "failed (timed out)" 5 s later: GLIDE's subscribe() waits
 * for a confirmation that never comes and does not say why (its core retries the refused SUBSCRIBE
 * in the background, logging an ERROR line each time), where ioredis and node-redis reject it with
 * Redis' NOPERM. The driver now asks the channel with a PUBLISH that nobody acts on once the
 * subscription is not confirmed at once: its NOPERM is the subscription's refusal.
 */
describe('waiters of a Redis user without the release channels (ACL)', () => {
  const server = useOwnServer();
  const user = useAclUser(server, 'no-channels');
  const app = useLockApps();

  const clients: Record<string, (url: string) => Promise<{ client: unknown; close(): Promise<unknown> }>> = {
    ioredis: async (url) => ({ client: url, close: async () => undefined }),
    'node-redis': CLIENTS_ON_URL['node-redis'],
    GLIDE: CLIENTS_ON_URL.GLIDE,
  };

  it.each(Object.keys(clients))('%s: the warning says the subscription was refused by the ACL, and the waiter still gets the lock', { timeout: 30_000 }, async (name) => {
    await user.rules('resetchannels');
    const opened = await clients[name]!(user.url());
    try {
      const holder = await app({ redis: server.url() });
      const waiter = await app({ redis: opened.client as never });
      const held = await holder.locks.acquire('k');
      const waiting = waiter.locks.acquire('k', { waitTimeout: 20_000 });
      // Seen below; a failure before that leaves it to the app's close.
      waiting.catch(() => undefined);
      // Failed (GLIDE): only "could not be subscribed within 250 ms", then "failed (timed out)" 5 s later.
      await expect
        .poll(() => waiter.logs.lines.map((line) => line.message).filter((message) => message.startsWith('Subscribing to')), { timeout: 15_000 })
        .toContainEqual(expect.stringMatching(/^Subscribing to "lock:\{k\}:released" failed \(.*(NOPERM|PermissionDenied).*\): the Redis user .*may not subscribe.*&lock:\*/));
      expect(waiter.logs.lines.map((line) => line.message).join('\n')).not.toMatch(/timed out/);
      await held.release();
      await (await waiting).release();
    } finally {
      await opened.close();
    }
  });
});

describe('waiters of a Redis user without the release channels (ACL), on a Cluster (SSUBSCRIBE)', () => {
  // Registered first: its afterAll runs last, while the cluster still answers the ACL DELUSER.
  const redisCluster = useRedisCluster();
  const app = useLockApps();
  const USER = `no-channels-cluster-${process.pid}`;
  beforeAll(async () => {
    for (const { host, port } of redisCluster.cluster.nodes) {
      const node = new Redis(port, host);
      // The documented Cluster user, its channels taken away again.
      await node.acl('SETUSER', USER, 'reset', ...LOCK_ACL, ...CLUSTER_ACL_RULES, 'resetchannels');
      node.disconnect();
    }
  });
  afterAll(async () => {
    for (const { host, port } of redisCluster.cluster.nodes) {
      const node = new Redis(port, host);
      await node.acl('DELUSER', USER).catch(() => undefined);
      node.disconnect();
    }
  });

  const clients: Record<string, (nodes: { host: string; port: number }[]) => Promise<{ client: unknown; close(): unknown }>> = {
    ioredis: async (nodes) => {
      const client = new Cluster(nodes, { redisOptions: { username: USER, password: 'lock-secret' } });
      client.on('error', () => undefined);
      await client.ping();
      return { client, close: () => client.disconnect() };
    },
    GLIDE: async (nodes) => {
      const client = await GlideClusterClient.createClient({ addresses: nodes, requestTimeout: 2_000, credentials: { username: USER, password: 'lock-secret' } });
      return { client, close: () => client.close() };
    },
  };

  it.each(Object.keys(clients))('%s: the warning says the sharded subscription was refused by the ACL', { timeout: 60_000 }, async (name) => {
    const opened = await clients[name]!(redisCluster.cluster.nodes);
    const admin = new Cluster(redisCluster.cluster.nodes);
    try {
      const holder = await app({ redis: admin as never });
      const waiter = await app({ redis: opened.client as never });
      const key = `channels-${name}`;
      const held = await holder.locks.acquire(key);
      const waiting = waiter.locks.acquire(key, { waitTimeout: 30_000 });
      waiting.catch(() => undefined);
      // Failed (GLIDE): only "could not be subscribed within 250 ms", then "failed (timed out)" 5 s later.
      await expect
        .poll(() => waiter.logs.lines.map((line) => line.message).filter((message) => message.startsWith('Subscribing to')), { timeout: 15_000 })
        .toContainEqual(expect.stringMatching(new RegExp(`^Subscribing to "lock:\\{${key}\\}:released" failed \\(.*(NOPERM|PermissionDenied).*\\): the Redis user may not subscribe.*&lock:\\*.*\\+ssubscribe`)));
      expect(waiter.logs.lines.map((line) => line.message).join('\n')).not.toMatch(/timed out/);
      await held.release();
      await (await waiting).release();
    } finally {
      admin.disconnect();
      await opened.close();
    }
  });
});
