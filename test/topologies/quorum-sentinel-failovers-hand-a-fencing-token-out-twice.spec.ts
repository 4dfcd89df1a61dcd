import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createLockApp } from '../support/lock-app.js';

const FENCE = 'lock:{q:failover}:fence';
const REPLICATOR = 'replicator';

/**
 * Found by review (forty-second session). Quorum mode accepts Sentinel options as a master
 * (`{ sentinels, name }`), and `waitForReplicas` is refused there, so a failover of such a master
 * to a replica that had not received the last acquisition rolls that master's fencing counter
 * back, the counter still present. The clock seed of `QUORUM_ACQUIRE` started only a counter
 * that was missing: two such failovers (each master's replica lagging, its link to its master cut
 * here, then a real `SENTINEL FAILOVER`) made a majority of counters one below the token handed
 * out, and the next acquisition got the same token while the first holder still held its lock
 * on the third master: two holders, one token, which no fenced resource can tell apart. A
 * counter below the seed is now raised to it as a missing one is started there, so the rolled-back
 * majority hands out a token above the first holder's (within the clock's bound,
 * docs/redis-data.md).
 */
describe('quorum mode over Sentinel-managed masters whose replicas lag', () => {
  const deployments: SentinelDeployment[] = [];
  let third: RedisServer;
  beforeAll(async () => {
    deployments.push(...(await Promise.all([startSentinelDeployment(), startSentinelDeployment()])));
    third = await startRedisServer();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(deployments.map((deployment) => deployment.stop()));
    await third?.stop();
  });

  const onPort = async <T>(port: number, fn: (node: Redis) => Promise<T>): Promise<T> => {
    const node = new Redis(port, '127.0.0.1');
    node.on('error', () => undefined); // a failover ends the admin connections of a promoted replica
    try {
      return await fn(node);
    } finally {
      node.disconnect();
    }
  };

  /** A group's master and replica now (a test run again finds the first run's failover). */
  interface Group {
    readonly deployment: SentinelDeployment;
    readonly master: number;
    readonly replica: number;
  }
  const rolesOf = async (deployment: SentinelDeployment): Promise<Group> => {
    const master = await deployment.masterPortNow();
    const replica = master === deployment.masterPort ? deployment.replicaPort : deployment.masterPort;
    // A demoted master is made a replica once the sentinels read its role again (seconds later).
    const synced = new RegExp(`master_port:${master}[\\s\\S]*master_link_status:up`);
    await expect.poll(() => onPort(replica, (node) => node.info('replication')), { timeout: 60_000 }).toMatch(synced);
    return { deployment, master, replica };
  };

  /**
   * The replica of `group` replicates as a user of its own, which the master then deletes: the
   * replica stays up, answers the sentinels, and applies nothing more of its master (a replica
   * lagging, as a network fault between them leaves it).
   */
  async function replicateAsOwnUser(group: Group): Promise<void> {
    await onPort(group.master, (node) => node.call('ACL', 'SETUSER', REPLICATOR, 'on', '>secret', '+@all', '~*', '&*'));
    await onPort(group.replica, async (node) => {
      await node.config('SET', 'masteruser', REPLICATOR);
      await node.config('SET', 'masterauth', 'secret');
      await node.call('CLIENT', 'KILL', 'TYPE', 'master');
    });
    await expect.poll(() => onPort(group.master, (node) => node.call('CLIENT', 'LIST', 'TYPE', 'replica')), { timeout: 20_000 }).toContain(`user=${REPLICATOR}`);
    await expect.poll(() => onPort(group.replica, (node) => node.info('replication')), { timeout: 20_000 }).toContain('master_link_status:up');
  }
  const cutReplication = (group: Group) => onPort(group.master, (node) => node.call('ACL', 'DELUSER', REPLICATOR));

  /**
   * A sentinel promotes a replica whose link has been down for at most ten times
   * `down-after-milliseconds` (1 s in these deployments): raised, so that a loaded machine's slow
   * steps between the cut and the second failover do not leave that replica unfit.
   */
  const tolerateLongerLinkDowns = ({ deployment }: Group) =>
    Promise.all(deployment.sentinels.map(({ port }) => onPort(port, (sentinel) => sentinel.call('SENTINEL', 'SET', deployment.name, 'down-after-milliseconds', '10000'))));

  /** `SENTINEL FAILOVER`, waited for until the sentinels name the promoted replica. */
  async function failOver({ deployment, replica }: Group): Promise<void> {
    await onPort(deployment.sentinels[0]!.port, (sentinel) => sentinel.call('SENTINEL', 'FAILOVER', deployment.name));
    await expect.poll(() => deployment.masterPortNow(), { timeout: 30_000 }).toBe(replica);
    await expect.poll(() => onPort(replica, (node) => node.role().then(([role]) => role)), { timeout: 30_000 }).toBe('master');
  }

  it('hands a second holder a fencing token above the first holder\'s after both groups fail over', { timeout: 120_000 }, async () => {
    const groups = await Promise.all(deployments.map(rolesOf));
    const entries = [...deployments.map(({ sentinels, name }) => ({ sentinels, name, failoverDetector: true })), third.url];
    // A long lease: the first holder keeps its copy on the third master while the failovers run.
    const options = { redis: entries as never, ttl: 120_000 };
    const first = await createLockApp(options);
    let second: Awaited<ReturnType<typeof createLockApp>> | undefined;
    try {
      for (const group of groups) {
        await tolerateLongerLinkDowns(group);
        await replicateAsOwnUser(group);
      }
      // The key's counters, in step on every master and on both replicas.
      const warm = await first.locks.acquire('q:failover');
      await warm.release();
      const before = warm.fencingToken;
      for (const port of [third.port, ...groups.flatMap((group) => [group.master, group.replica])]) {
        await expect.poll(() => onPort(port, (node) => node.get(FENCE))).toBe(String(before));
      }
      // Each replica falls behind: what its master answers from now on is not applied there.
      for (const group of groups) await cutReplication(group);
      const held = await first.locks.acquire('q:failover');
      expect(held.fencingToken).toBeGreaterThan(before);
      for (const group of groups) {
        // The round ends on a majority's grants: a master's may land a moment later.
        await expect.poll(() => onPort(group.master, (node) => node.get(FENCE))).toBe(String(held.fencingToken));
        expect(await onPort(group.replica, (node) => node.get(FENCE))).toBe(String(before));
      }
      // Both masters fail over to their lagging replicas, which drop what they had not applied.
      for (const group of groups) {
        await failOver(group);
        expect(await onPort(group.replica, (node) => node.get(FENCE))).toBe(String(before));
      }

      second = await createLockApp(options);
      const rival = await second.locks.tryAcquire('q:failover');
      expect(rival).not.toBeNull();
      // Both hold the lock (the failovers lost the first one's grants), but a fenced resource
      // refuses the first holder once it saw the rival's token.
      expect(held.held).toBe(true);
      expect(rival!.fencingToken).toBeGreaterThan(held.fencingToken);
      await rival!.release();
      await held.release().catch(() => undefined);
    } finally {
      await second?.close();
      await first.close();
    }
  });
});
