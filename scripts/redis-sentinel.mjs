// Starts a throwaway Sentinel deployment on free loopback ports: one master, one replica and
// three sentinels watching them under the name "mymaster".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { killOnExit, onFreshPorts, waitForOwnServer } from './ports.mjs';
import { assertRedisInstalled } from './redis-server.mjs';

const NAME = 'mymaster';

export function startSentinelDeployment() {
  assertRedisInstalled();
  // Started again on other ports when one was taken by another file's server meanwhile.
  return onFreshPorts(5, 0, startOn);
}

async function startOn([masterPort, replicaPort, ...sentinelPorts]) {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const children = [];
  const stopAll = async () => {
    // A child killed by a signal has no exit code (its signalCode says so), and one frozen
    // (SIGSTOP) ends on SIGTERM only once it runs again: as the Cluster's stop() does.
    const gone = (child) => child.exitCode !== null || child.signalCode !== null;
    await Promise.all(children.map((child) => new Promise((resolve) => (gone(child) ? resolve() : (child.once('exit', resolve), child.kill('SIGCONT'), child.kill('SIGTERM'))))));
    rmSync(dir, { recursive: true, force: true });
  };
  const server = (port, extra) => {
    const child = killOnExit(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', '--dir', dir, ...extra], { stdio: 'ignore' }));
    children.push(child);
    return waitForOwnServer(port, child);
  };
  let sentinel;
  try {
    await Promise.all([server(masterPort, []), server(replicaPort, ['--replicaof', '127.0.0.1', String(masterPort)])]);
    const master = new Redis(masterPort, '127.0.0.1');
    await until(async () => /slave0:.*state=online/.test(await master.info('replication')), 30_000, 'the replica to sync').finally(() => master.disconnect());
    const started = sentinelPorts.map((port) => {
      const config = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        config,
        [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor ${NAME} 127.0.0.1 ${masterPort} 2`, `sentinel down-after-milliseconds ${NAME} 1000`,
          `sentinel failover-timeout ${NAME} 5000`, `sentinel parallel-syncs ${NAME} 1`, ''].join('\n'),
      );
      const child = killOnExit(spawn('redis-sentinel', [config], { stdio: 'ignore' }));
      children.push(child);
      return waitForOwnServer(port, child);
    });
    await Promise.all(started);
    sentinel = new Redis(sentinelPorts[0], '127.0.0.1');
    // Wait until the sentinels know the replica (a failover needs one) and each other.
    await until(async () => {
      const replicas = await sentinel.call('SENTINEL', 'REPLICAS', NAME);
      const sentinels = await sentinel.call('SENTINEL', 'SENTINELS', NAME);
      return replicas.length >= 1 && sentinels.length >= 2;
    }, 30_000, 'sentinels to discover the replica and each other');
  } catch (error) {
    sentinel?.disconnect();
    await stopAll();
    throw error;
  }
  const masterPortNow = async () => Number((await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME))[1]);
  return {
    name: NAME,
    sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
    masterPort,
    replicaPort,
    masterPortNow,
    /** Promotes the replica and waits until it is the master everyone sees. */
    async failover() {
      const before = await masterPortNow();
      await sentinel.call('SENTINEL', 'FAILOVER', NAME);
      await until(async () => {
        const after = await masterPortNow();
        if (after === before) return false;
        const node = new Redis(after, '127.0.0.1');
        const role = await node.role().catch(() => ['unknown']);
        await node.quit();
        return role[0] === 'master';
      }, 30_000, 'the failover');
      return masterPortNow();
    },
    async stop() {
      sentinel.disconnect();
      await stopAll();
    },
  };
}

async function until(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
