import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { killOnExit, waitForPing } from '../../../scripts/ports.mjs';
// @ts-expect-error -- untyped in ports.d.mts: free ports whose port + companion is free too.
import { freeFixedPorts as freeFixedPortsUntyped } from '../../../scripts/ports.mjs';

const freeFixedPorts = freeFixedPortsUntyped as (count: number, companion?: number) => Promise<number[]>;

/** A Redis Cluster of 3 masters, each with one replica, on free loopback ports. */
export interface ReplicatedCluster {
  nodes: { host: string; port: number }[];
  /** The port of the master that owns `slot`, and of its replica. */
  shardOf(slot: number): Promise<{ master: number; replica: number }>;
  /** `CLUSTER FAILOVER` on `replica`; resolves once it is a master and every node sees cluster_state:ok. */
  failover(replica: number): Promise<void>;
  /** SIGKILLs the master on `port`; resolves once `replica` took over and the surviving nodes see cluster_state:ok. */
  crash(port: number, replica: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startReplicatedCluster(): Promise<ReplicatedCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-rcluster-'));
  const ports: number[] = await freeFixedPorts(6, 10_000);
  const children: ChildProcess[] = ports.map((port) =>
    killOnExit(
      spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', '2000',
          '--save', '', '--appendonly', 'no', '--loglevel', 'warning', '--dir', dir],
        { stdio: 'ignore' },
      ),
    ),
  );
  await Promise.all(ports.map((port) => waitForPing(port)));
  const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  const allOk = async (): Promise<boolean> => {
    for (const port of ports) {
      const node = new Redis(port, '127.0.0.1');
      const info = String(await node.cluster('INFO').catch(() => ''));
      const nodes = String(await node.cluster('NODES').catch(() => ''));
      node.disconnect();
      if (!info.includes('cluster_state:ok')) return false;
      // Every replica knows its master and is connected.
      if (nodes.split('\n').filter((line) => line.includes('slave')).length !== 3) return false;
      if (/fail|handshake|noaddr/.test(nodes)) return false;
    }
    for (const port of ports) {
      const node = new Redis(port, '127.0.0.1');
      const replication = await node.info('replication');
      node.disconnect();
      if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
    }
    return true;
  };
  await until(allOk, 30_000, 'the replicated cluster');
  const shardOf = async (slot: number) => {
    const node = new Redis(ports[0]!, '127.0.0.1');
    try {
      for (;;) {
        const slots = (await node.cluster('SLOTS')) as unknown as [number, number, [string, number], [string, number]?][];
        const range = slots.find(([from, to]) => slot >= from && slot <= to);
        if (range?.[3] !== undefined) return { master: range[2][1], replica: range[3][1] };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      node.disconnect();
    }
  };
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    shardOf,
    async failover(replica) {
      const node = new Redis(replica, '127.0.0.1');
      await node.cluster('FAILOVER');
      await until(async () => (await node.role())[0] === 'master', 30_000, 'the failover');
      node.disconnect();
      await until(allOk, 30_000, 'the cluster after the failover');
    },
    async crash(port, replica) {
      const child = children[ports.indexOf(port)]!;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      const node = new Redis(replica, '127.0.0.1');
      await until(async () => (await node.role())[0] === 'master' && String(await node.cluster('INFO')).includes('cluster_state:ok'), 30_000, 'the replica to take over');
      node.disconnect();
    },
    async stop() {
      await Promise.all(children.map((child) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))))));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
