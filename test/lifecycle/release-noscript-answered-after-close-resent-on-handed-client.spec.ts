/**
 * Suspected by review (forty-third session). A release sent before `app.close()` goes as EVALSHA;
 * a server that lost its scripts (a restart, `SCRIPT FLUSH`) answers NOSCRIPT, and the driver
 * sends the script again as EVAL. A server frozen while that release was on its way answers only
 * once it resumes, after the close: the EVAL then went out on the client the application handed in
 * and keeps open, from an application closed already (nothing is sent on a client handed in after
 * `app.close()`, docs/configuration.md). The lock ends with its lease instead.
 */
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { useOwnRedis } from '../support/redis.js';

/** A client handed in, and a way to hear of each command the library sends on it from now on. */
interface Handed {
  client: RedisLockModuleOptions['redis'];
  record(sent: string[]): void;
  ping(): Promise<unknown>;
}

const clients: [string, (url: string) => Promise<Handed>][] = [
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

describe('a release that a frozen Redis answers NOSCRIPT after app.close(), on a client handed in', () => {
  const own = useOwnRedis();

  it.each(clients)('is not sent again as EVAL once the application has closed (%s)', { timeout: 30_000 }, async (_name, open) => {
    const handed = await open(own.url());
    const app = await createLockApp({ redis: handed.client, ttl: 10_000, shutdownTimeout: '100ms' });
    const sent: string[] = [];
    try {
      const lock = await app.locks.acquire('noscript');
      // The server forgets the scripts: the release's EVALSHA is answered NOSCRIPT.
      await own.redis().script('FLUSH');
      own.server().pause();
      const released = lock.release().catch((error: unknown) => error);
      await app.close();
      // Ended with the close: Redis has not answered.
      expect(await released).toBeInstanceOf(Error);
      handed.record(sent);
      own.server().resume();
      // Redis answers what was written to it before the close: the EVALSHA, with NOSCRIPT.
      await handed.ping();
      await sleep(500);
      // Before: ['eval'], the release sent again after the close.
      expect(sent.filter((command) => command !== 'ping')).toEqual([]);
      // The lock ends with its lease.
      expect(await own.redis().pttl('lock:{noscript}')).toBeGreaterThan(0);
    } finally {
      own.server().resume();
    }
  });

  it.each(clients)('nor is a renewal (%s)', { timeout: 30_000 }, async (_name, open) => {
    const handed = await open(own.url());
    // Renewed every 300 ms.
    const app = await createLockApp({ redis: handed.client, ttl: 900, shutdownTimeout: '100ms' });
    const sent: string[] = [];
    try {
      await app.locks.acquire('noscript-renewed');
      // Renewed once: ioredis sends a script's first call on a connection as EVAL, its next ones as EVALSHA.
      await sleep(450);
      await own.redis().script('FLUSH');
      own.server().pause();
      // A renewal is written to the frozen server, as EVALSHA.
      await sleep(700);
      await app.close();
      handed.record(sent);
      own.server().resume();
      await handed.ping();
      await sleep(500);
      // Before: ['eval'], the renewal sent again after the close.
      expect(sent.filter((command) => command !== 'ping')).toEqual([]);
    } finally {
      own.server().resume();
    }
  });
});
