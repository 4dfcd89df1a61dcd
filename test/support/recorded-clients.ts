/**
 * Clients handed in to a lock module whose commands a test hears of, one by one, from a moment it
 * chooses: what a closed application still sends on them (the specs of test/lifecycle/ on
 * NOSCRIPT answered after app.close()). Closed when the test ends.
 */
import { Redis } from 'ioredis';
import { onTestFinished } from 'vitest';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { openClient } from './handed-clients.js';
import { sleep } from './lock-app.js';
import { nodeRedisClient } from './node-redis.js';

/** A client handed in, and a way to hear of each command the library sends on it from now on. */
export interface Handed {
  client: RedisLockModuleOptions['redis'];
  record(sent: string[]): void;
  ping(): Promise<unknown>;
}

export const RECORDED_CLIENTS: [string, (url: string) => Promise<Handed>][] = [
  [
    'ioredis',
    async (url) => {
      const client = new Redis(url);
      client.on('error', () => undefined);
      onTestFinished(() => void client.disconnect());
      return {
        client,
        record: (sent) => {
          const send = client.sendCommand.bind(client);
          client.sendCommand = ((command: { name: string }) => (sent.push(command.name.toLowerCase()), send(command as never))) as Redis['sendCommand'];
        },
        ping: () => client.ping(),
      };
    },
  ],
  [
    'node-redis',
    async (url) => {
      const client = await nodeRedisClient(url);
      onTestFinished(async () => void (await client.close().catch(() => undefined)));
      const raw = client as unknown as { sendCommand(args: string[], ...rest: unknown[]): Promise<unknown> };
      return {
        client: client as unknown as RedisLockModuleOptions['redis'],
        record: (sent) => {
          const send = raw.sendCommand.bind(raw);
          raw.sendCommand = (args, ...rest) => (sent.push(String(args[0]).toLowerCase()), send(args, ...rest));
        },
        ping: () => raw.sendCommand(['PING']),
      };
    },
  ],
];

/** A Valkey GLIDE client handed in: the driver sends every command through its `customCommand`. */
export async function recordedGlide(url: string): Promise<Handed> {
  const { client, close } = await openClient('GLIDE', url);
  onTestFinished(() => close());
  const raw = client as unknown as { customCommand(args: string[], ...rest: unknown[]): Promise<unknown> };
  return {
    client,
    record: (sent) => {
      const send = raw.customCommand.bind(raw);
      raw.customCommand = (args, ...rest) => (sent.push(String(args[0]).toLowerCase()), send(args, ...rest));
    },
    ping: () => raw.customCommand(['PING']),
  };
}

/**
 * A call sent to a Redis that lost its scripts (its EVALSHA is answered NOSCRIPT) while that
 * server is frozen, then `close()` (the application's), then the server resumed: what the call
 * settled with at the close, and what was sent on `handed` after it but PINGs. The caller resumes
 * the server in its `finally` too, for a failure on the way.
 */
export async function sentAfterClose(
  handed: Handed,
  server: { redis(): Redis; server(): { pause(): void; resume(): void } },
  call: () => Promise<unknown>,
  close: () => Promise<void>,
): Promise<{ settled: unknown; sent: string[] }> {
  await server.redis().script('FLUSH');
  server.server().pause();
  const settling = call().catch((error: unknown) => error);
  await close();
  // Ended with the close: Redis has not answered.
  const settled = await settling;
  const sent: string[] = [];
  handed.record(sent);
  server.server().resume();
  // Redis answers what was written to it before the close: the EVALSHA, with NOSCRIPT; a resend
  // would go out at once.
  await handed.ping();
  await sleep(500);
  return { settled, sent: sent.filter((command) => command !== 'ping') };
}
