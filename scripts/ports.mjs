// Loopback port helpers for the throwaway Redis deployments.
import { once } from 'node:events';
import { connect, createServer } from 'node:net';

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
