// Starts a throwaway Redis Cluster of N masters on free loopback ports (each also needs its
// cluster bus port, port + 10000), joined with `redis-cli --cluster create`.
// `requireFullCoverage: false` keeps the healthy masters serving their slots while one is down
// (Redis' `cluster-require-full-coverage no`), so that a test can kill one master alone.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { assertRedisInstalled } from './redis-server.mjs';
import { killOnExit, onFreshPorts, waitForOwnServer } from './ports.mjs';

export function startRedisCluster(masters = 3, { requireFullCoverage = true } = {}) {
  assertRedisInstalled();
  // Started again on other ports when one was taken by another file's server meanwhile.
  return onFreshPorts(masters, 10_000, (ports) => startOn(ports, requireFullCoverage));
}

async function startOn(ports, requireFullCoverage) {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const serve = (port) =>
    killOnExit(spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', '2000', '--cluster-require-full-coverage', requireFullCoverage ? 'yes' : 'no', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', '--dir', dir,
        '--dbfilename', `dump-${port}.rdb`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    ));
  const children = ports.map(serve);
  const stop = async () => {
    await Promise.all(
      children.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGCONT'), child.kill('SIGTERM'))))),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(ports.map((port, i) => waitForOwnServer(port, children[i])));
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  } catch (error) {
    await stop();
    throw error;
  }
  // Wait until every node agrees the cluster is up.
  const clusterUp = async (nodePorts) => {
    const deadline = Date.now() + 20_000;
    for (const port of nodePorts) {
      const node = new Redis(port, '127.0.0.1');
      while (!String(await node.cluster('INFO')).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error('the cluster did not come up within 20 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await node.quit();
    }
  };
  await clusterUp(ports);
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    /** SIGKILLs the master at `index` (of `nodes`) and waits until it is gone. */
    async kill(index) {
      const child = children[index];
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    /**
     * Restarts the master at `index` with its data (`SHUTDOWN SAVE`, then the same server again on
     * the same port, node id and slots): a new run id, as after a deploy or a crash with persistence.
     */
    async restart(index) {
      const port = ports[index];
      const exited = new Promise((resolve) => children[index].once('exit', resolve));
      const node = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null });
      node.on('error', () => undefined);
      await node.call('SHUTDOWN', 'SAVE').catch(() => undefined);
      node.disconnect();
      await exited;
      children[index] = serve(port);
      await waitForOwnServer(port, children[index]);
      await clusterUp(ports);
    },
    /** Freezes (SIGSTOP) or thaws (SIGCONT) the master at `index`: it holds connections open and answers nothing. */
    pause: (index) => children[index].kill('SIGSTOP'),
    resume: (index) => children[index].kill('SIGCONT'),
    stop,
  };
}
