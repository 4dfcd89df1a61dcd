// Starts throwaway redis-server processes on free loopback ports, for the tests, the demo and
// the benchmarks. Plain JavaScript so that scripts can use it without a build.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { killOnExit, waitForPing } from './ports.mjs';

/** Whether `redis-server` is on the PATH. */
export function redisServerInstalled() {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return !probe.error && probe.status === 0;
}

export function assertRedisInstalled() {
  if (!redisServerInstalled()) {
    throw new Error(
      'redis-server is not installed, and a real one is needed. Install it ' +
        '(Debian/Ubuntu: `apt-get install -y redis-server`, macOS: `brew install redis`), ' +
        'or point at a running server with REDIS_URL=redis://host:port.',
    );
  }
}

export async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts `redis-server` without persistence on a free port. */
export async function startRedisServer(extraArgs = []) {
  assertRedisInstalled();
  let child;
  let port = 0;
  const launch = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning', ...extraArgs];
    child = killOnExit(spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] }));
    await waitForPort(port, child);
  };
  for (let tries = 0; ; tries++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      child?.kill('SIGKILL');
      if (tries >= 4) throw error;
    }
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop({ kill = false } = {}) {
      const current = child;
      if (!current || current.exitCode !== null || current.signalCode !== null) return;
      const exited = once(current, 'exit');
      // A kill ends a frozen (SIGSTOP) server as it is: SIGCONT first would let it answer a
      // little of what waits for it before it dies.
      if (kill) current.kill('SIGKILL');
      current.kill('SIGCONT');
      if (!kill) current.kill('SIGTERM');
      await exited;
    },
    start: launch,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
  };
}

async function waitForPort(port, child) {
  let exited = false;
  child.once('exit', () => (exited = true));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`redis-server exited while starting on port ${port}`);
    try {
      await waitForPing(port, 100);
      return;
    } catch {
      // not up yet
    }
  }
  throw new Error(`redis-server did not answer on port ${port} within 10 s`);
}
