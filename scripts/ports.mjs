// Loopback port helpers for the throwaway Redis deployments.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { Redis } from 'ioredis';

/** The first port of the kernel's ephemeral range (Linux; 32768 where it cannot be read). */
function ephemeralLow() {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

/**
 * `count` free loopback ports for servers whose port is chosen up front (a Sentinel deployment,
 * a Cluster), below the kernel's ephemeral range: there any outgoing connection of any process
 * may take a port as its local one between the check and the server's bind, and the server then
 * fails to start. `companion`: each port's `port + companion` must be free too (a Cluster node's
 * bus port).
 */
export async function freeFixedPorts(count, companion = 0) {
  const bottom = 10_000;
  const top = ephemeralLow() - 1 - companion;
  const ports = [];
  const width = top - bottom - count * 20;
  if (width <= 0) throw new Error(`no room for ${count} fixed ports below the ephemeral range (${top + 1 + companion})`);
  for (let port = bottom + Math.floor(Math.random() * width); ports.length < count && port <= top; port++) {
    if ((await isFree(port)) && (companion === 0 || (await isFree(port + companion)))) ports.push(port);
  }
  if (ports.length < count) throw new Error(`found only ${ports.length} of ${count} free ports below ${top + 1}`);
  return ports;
}

export async function isFree(port) {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch {
    return false;
  }
  server.close();
  await once(server, 'close');
  return true;
}

/** Resolves once a Redis (or Sentinel) answers PING on `port`. */
export async function waitForPing(port, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await answersPing(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`nothing answered PING on port ${port} within ${timeoutMs} ms`);
}

/**
 * A server of a deployment whose port another process took: two files of a parallel run may pick
 * the same free port (each checks it before either binds). The loser's server exits, and the
 * winner's answers its PINGs, so a deployment that only waited for PING went on with a stranger
 * among its nodes (a Sentinel deployment's "sentinel" answered "unknown command 'SENTINEL'").
 */
export class PortTakenError extends Error {}

/**
 * Resolves once `child`, a server started on `port`, answers PING there and is the one that does
 * (the `process_id` of its INFO). Rejects with `PortTakenError` when it exits first or another
 * process answers: start the deployment again on other ports (see `onFreshPorts`).
 */
export async function waitForOwnServer(port, child, timeoutMs = 10_000) {
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new PortTakenError(`the server started on port ${port} exited (its port taken by another process?)`);
    if (await answersPing(port)) {
      const pid = await serverPid(port);
      if (pid === child.pid) return;
      if (pid !== undefined) throw new PortTakenError(`port ${port} is served by process ${pid}, not by the server started there (${child.pid})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`nothing answered PING on port ${port} within ${timeoutMs} ms`);
}

async function serverPid(port) {
  const node = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  node.on('error', () => undefined);
  try {
    await node.connect();
    const pid = /process_id:(\d+)/.exec(await node.info('server'))?.[1];
    return pid === undefined ? undefined : Number(pid);
  } catch {
    return undefined;
  } finally {
    node.disconnect();
  }
}

/**
 * Runs `start(ports)` on `count` fresh fixed ports (see `freeFixedPorts`), and again on others,
 * up to three times in all, while it fails with `PortTakenError`. `start` stops what it started
 * before it throws.
 */
export async function onFreshPorts(count, companion, start) {
  for (let tries = 1; ; tries++) {
    const ports = await freeFixedPorts(count, companion);
    try {
      return await start(ports);
    } catch (error) {
      if (!(error instanceof PortTakenError) || tries >= 3) throw error;
    }
  }
}

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const children = new Set();
let hooked = false;

/** Kills `child` if this process exits first, so that a crashed run leaves no servers behind. */
export function killOnExit(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const running of children) running.kill('SIGKILL');
    });
  }
  return child;
}
