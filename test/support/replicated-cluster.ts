import { openClient } from './handed-clients.js';
import { nodeRedisCluster } from './node-redis.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { killOnExit, onFreshPorts, waitForOwnServer } from '../../scripts/ports.mjs';
import { assertRedisInstalled } from '../../scripts/redis-server.mjs';

type Nodes = { host: string; port: number }[];
type Opened = { client: unknown; close: () => unknown };

/**
 * Each client the library takes, opened on a Cluster's nodes, by name (the specs of real
 * failovers pick theirs with `CLIENTS=`): ioredis 5 (the default), ioredis 6, iovalkey, GLIDE,
 * node-redis 5 and 6.
 */
export const CLUSTER_CLIENTS: Record<string, (nodes: Nodes) => Promise<Opened>> = {
  'ioredis 5': async (nodes) => {
    const client = new Cluster(nodes);
    client.on('error', () => undefined);
    return { client, close: () => client.disconnect() };
  },
  iovalkey: (nodes) => openClient('iovalkey', nodes),
  'ioredis 6': (nodes) => openClient('ioredis 6', nodes),
  GLIDE: (nodes) => openClient('GLIDE', nodes),
  'node-redis 6': async (nodes) => {
    const client = await nodeRedisCluster(nodes, 6);
    return { client, close: () => client.close() };
  },
  'node-redis 5': async (nodes) => {
    const client = await nodeRedisCluster(nodes, 5);
    return { client, close: () => client.close() };
  },
};

/**
 * A Redis Cluster of 3 masters, each with one replica, on free loopback ports (each with its bus
 * port, port + 10000): a master lost (killed, frozen) is replaced by its replica, a real Cluster
 * failover. `scripts/redis-cluster.mjs` starts masters only.
 */
export interface ReplicatedCluster {
  readonly nodes: { host: string; port: number }[];
  /** The port of the master that owns `slot`, and of its replica, as a node that answers sees them. */
  shardOf(slot: number): Promise<{ master: number; replica: number }>;
  /** `CLUSTER FAILOVER` on `replica`; resolves once it is a master and every node sees cluster_state:ok. */
  failover(replica: number): Promise<void>;
  /** SIGKILLs the master on `port`; resolves once `replica` took over and the surviving nodes see cluster_state:ok. */
  crash(port: number, replica: number): Promise<void>;
  /**
   * Freezes (SIGSTOP) the master on `port`: its connections stay open and nothing answers, as a
   * paused VM or a partition that resets nothing. Resolves once the cluster promoted `replica`
   * (every other node sees cluster_state:ok). `stop()` thaws it too.
   */
  freeze(port: number, replica: number): Promise<void>;
  /** Thaws (SIGCONT) a frozen node: it rejoins as a replica of the master that replaced it (a few seconds, not waited for). */
  thaw(port: number): void;
  stop(): Promise<void>;
}

export interface ReplicatedClusterOptions {
  /**
   * `cluster-node-timeout` (ms): how long a master may stay silent before the others count it
   * failed and its replica is promoted (about twice this, plus the election). 2 s by default.
   */
  nodeTimeout?: number;
}

/** Starts a replicated Cluster of the caller's own (several seconds), every replica in sync; `stop()` ends every node. */
export function startReplicatedCluster({ nodeTimeout = 2_000 }: ReplicatedClusterOptions = {}): Promise<ReplicatedCluster> {
  assertRedisInstalled();
  // Started again on other ports when one was taken by another file's server meanwhile.
  return onFreshPorts(6, 10_000, (ports) => startOn(ports, nodeTimeout));
}

async function startOn(ports: number[], nodeTimeout: number): Promise<ReplicatedCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-rcluster-'));
  const children: ChildProcess[] = ports.map((port) =>
    killOnExit(
      spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', String(nodeTimeout),
          '--save', '', '--appendonly', 'no', '--loglevel', 'warning', '--dir', dir, '--dbfilename', `dump-${port}.rdb`],
        { stdio: 'ignore' },
      ),
    ),
  );
  const frozen = new Set<number>();
  const stop = async (): Promise<void> => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            // A stopped process takes no SIGTERM until it runs again.
            child.kill('SIGCONT');
            child.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(ports.map((port, i) => waitForOwnServer(port, children[i]!)));
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await until(() => allOk(ports), 30_000, 'the replicated cluster');
  } catch (error) {
    await stop();
    throw error;
  }
  const live = (): number[] => ports.filter((port, i) => !frozen.has(port) && children[i]!.exitCode === null && children[i]!.signalCode === null);
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    shardOf: async (slot) => {
      let shard: { master: number; replica: number } | undefined;
      // A shard whose master was replaced lists a replica again once the old master rejoined.
      await until(async () => {
        const slots = (await ask(live()[0]!, (node) => node.cluster('SLOTS'))) as unknown as [number, number, [string, number], [string, number]?][];
        const range = slots.find(([from, to]) => slot >= from && slot <= to);
        if (range?.[3] !== undefined) shard = { master: range[2][1], replica: range[3][1] };
        return shard !== undefined;
      }, 30_000, `a master and a replica for slot ${slot}`);
      return shard!;
    },
    async failover(replica) {
      await ask(replica, (node) => node.cluster('FAILOVER'));
      await until(async () => (await ask(replica, (node) => node.role()))[0] === 'master', 30_000, 'the failover');
      await until(() => allOk(ports), 30_000, 'the cluster after the failover');
    },
    async crash(port, replica) {
      const child = children[ports.indexOf(port)]!;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await until(() => promoted(replica, live()), 30_000, 'the replica to take over');
    },
    async freeze(port, replica) {
      frozen.add(port);
      children[ports.indexOf(port)]!.kill('SIGSTOP');
      await until(() => promoted(replica, live()), 30_000, 'the replica to take over');
    },
    thaw(port) {
      if (frozen.delete(port)) children[ports.indexOf(port)]!.kill('SIGCONT');
    },
    stop,
  };
}

/** Every node sees cluster_state:ok, knows three replicas and no failed node, and every replica is in sync. */
async function allOk(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const [info, nodes, replication] = await ask(port, async (node) => [String(await node.cluster('INFO')), String(await node.cluster('NODES')), await node.info('replication')]);
    if (!info.includes('cluster_state:ok')) return false;
    if (nodes.split('\n').filter((line) => line.includes('slave')).length !== 3) return false;
    if (/fail|handshake|noaddr/.test(nodes)) return false;
    if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
  }
  return true;
}

/** `replica` is a master, and every node in `live` sees cluster_state:ok. */
async function promoted(replica: number, live: number[]): Promise<boolean> {
  if ((await ask(replica, (node) => node.role()))[0] !== 'master') return false;
  for (const port of live) if (!String(await ask(port, (node) => node.cluster('INFO'))).includes('cluster_state:ok')) return false;
  return true;
}

/** `fn` on a connection of its own to the node on `port`, closed after it. */
async function ask<T>(port: number, fn: (node: Redis) => Promise<T>): Promise<T> {
  const node = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
  node.on('error', () => undefined);
  try {
    return await fn(node);
  } finally {
    node.disconnect();
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
