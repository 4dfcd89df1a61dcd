/**
 * Suspected by review (forty-third session), after the store stopped sending a NOSCRIPT-answered
 * release again once closed. A write (a read for update, a read) through the module's
 * `FencedRedis` goes as EVALSHA on the module's connection; a server that lost its scripts answers
 * NOSCRIPT, and the driver sends the script again as EVAL. A server frozen while that write was on
 * its way answers only once it resumes, after `app.close()`: the EVAL then wrote user data on the
 * client the application handed in, from an application closed already and under a lock given
 * back. The write's promise rejected at the close saying it may have been applied; it is not.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FencedRedis, LockService, RedisLockError, RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
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

/** What is sent through FencedRedis while Redis is frozen: a write, a read for update, a read. */
const calls: [string, (fenced: FencedRedis, token: number) => Promise<unknown>][] = [
  ['a write', (fenced, token) => fenced.set('data:{fenced}', 'late', token)],
  ['a read for update', (fenced, token) => fenced.get('data:{fenced}', token)],
  ['a plain read', (fenced) => fenced.hget('data:{fenced}', 'balance')],
];

const cases = clients.flatMap(([client, open]) => calls.map(([call, send]) => [call, client, open, send] as const));

describe('a FencedRedis call that a frozen Redis answers NOSCRIPT after app.close(), on a client handed in', () => {
  const own = useOwnRedis();

  it.each(cases)('%s is not sent again as EVAL once the application has closed (%s)', { timeout: 30_000 }, async (_call, _client, open, send) => {
    const handed = await open(own.url());
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: handed.client, ttl: 10_000, shutdownTimeout: '100ms' })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const fenced = moduleRef.get(FencedRedis);
    const sent: string[] = [];
    try {
      const lock = await moduleRef.get(LockService).acquire('fenced');
      // The server forgets the scripts: the call's EVALSHA is answered NOSCRIPT.
      await own.redis().script('FLUSH');
      own.server().pause();
      const settled = send(fenced, lock.fencingToken!).catch((error: unknown) => error);
      await moduleRef.close();
      // Ended with the close: Redis has not answered, and whether it ran was not known then.
      expect(await settled).toBeInstanceOf(RedisLockError);
      handed.record(sent);
      own.server().resume();
      // Redis answers what was written to it before the close: the EVALSHA, with NOSCRIPT.
      await handed.ping();
      await sleep(500);
      // Before: ['eval'], the call sent again after the close.
      expect(sent.filter((command) => command !== 'ping')).toEqual([]);
      // Nothing written, nothing claimed.
      expect(await own.redis().exists('data:{fenced}', '{fenced}:fence')).toBe(0);
    } finally {
      own.server().resume();
    }
  });
});
