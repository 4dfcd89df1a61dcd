import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { redisUrl } from './redis.js';

export interface SeenCommand {
  args: string[];
  at: number;
  /** When the server ran it, on the server's clock (ms since the epoch): exact under any load here. */
  serverAt: number;
}

/**
 * Every command the test server (or the server at `server`, on its URL's database) receives on
 * this worker's database that names `key` (or any name `names` accepts), from now until `stop()`. Speaks MONITOR over a plain socket: ioredis' monitor mode can trip over output
 * that arrives before it has switched modes. MONITOR sees the whole server, so other workers'
 * commands are filtered out by database.
 */
export async function watchCommands(key: string, server = redisUrl(), names: (arg: string) => boolean = (arg) => arg === key): Promise<{ seen: SeenCommand[]; stop(): Promise<void> }> {
  const url = new URL(server);
  const db = Number(url.pathname.slice(1));
  const socket = connect(Number(url.port), url.hostname);
  const seen: SeenCommand[] = [];
  let buffer = '';
  let ready!: () => void;
  const monitoring = new Promise<void>((resolve) => (ready = resolve));
  let barrier: { marker: string; reached: () => void } | undefined;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\r\n')) !== -1) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (line === '+OK') {
        ready();
        continue;
      }
      if (barrier !== undefined && line.includes(barrier.marker)) barrier.reached();
      const match = /^\+([\d.]+) \[(\d+) [^\]]*\] (.*)$/.exec(line);
      if (!match || Number(match[2]) !== db) continue;
      const args = parseQuoted(match[3]!);
      if (args.some(names)) seen.push({ args, at: performance.now(), serverAt: Number(match[1]) * 1000 });
    }
  });
  socket.write('MONITOR\r\n');
  await monitoring;
  return {
    seen,
    async stop() {
      // Stopped already (a test stops it before its assertions, and again when it finishes).
      if (socket.destroyed) return;
      // Let commands already sent reach the server, then wait until a marker sent now shows up:
      // MONITOR lists commands in the order the server ran them, so every command run before
      // the marker has been seen, however late a loaded machine delivers the stream. (A server
      // that is down or frozen shows no marker: then what came within 2 s.)
      await new Promise((resolve) => setTimeout(resolve, 30));
      const marker = `monitor-barrier-${randomUUID()}`;
      const sender = connect(Number(url.port), url.hostname);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        barrier = { marker, reached: done };
        sender.on('error', done);
        socket.on('close', done);
        sender.write(`ECHO ${marker}\r\n`);
        if (socket.destroyed) done();
      });
      sender.destroy();
      socket.destroy();
    },
  };
}

/** Splits MONITOR's `"a" "b\"c"` into its arguments. */
function parseQuoted(text: string): string[] {
  const args: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    args.push(match[1]!.replace(/\\x([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))).replace(/\\(.)/g, '$1'));
  }
  return args;
}

export const isScriptCall = (command: SeenCommand): boolean => /^eval(sha)?$/i.test(command.args[0] ?? '');

/**
 * Which lock script a script call is, from the shape of its arguments (either key layout: five
 * declared keys on a Cluster, the lock alone elsewhere). After the keys, acquire sends token,
 * ttl and settings `<retention>:<lease>:<sharded>:<enqueue>`; release token and settings
 * `<retention>:<lease>:<sharded>`; leave token, ttl and those settings; renew (one lock) token and ttl.
 */
export function lockScriptKind(command: SeenCommand): 'acquire' | 'release' | 'leave' | 'renew' | undefined {
  if (!isScriptCall(command)) return undefined;
  const keys = Number(command.args[2]);
  const rest = command.args.length - 3 - keys;
  const settings = command.args[command.args.length - 1]!.split(':').length;
  if (rest === 3 && settings === 4) return 'acquire';
  if (rest === 2 && settings === 3) return 'release';
  if (rest === 3 && settings === 3) return 'leave';
  if (keys === 1 && rest === 2 && settings === 1) return 'renew';
  return undefined;
}
