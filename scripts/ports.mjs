// Loopback port helpers for the throwaway Redis deployments.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

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
