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
import { describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { RECORDED_CLIENTS as clients, sentAfterClose } from '../support/recorded-clients.js';
import { useOwnRedis } from '../support/redis.js';

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
    try {
      const lock = await moduleRef.get(LockService).acquire('fenced');
      const { settled, sent } = await sentAfterClose(handed, own, () => send(fenced, lock.fencingToken!), () => moduleRef.close());
      // Whether it ran was not known at the close.
      expect(settled).toBeInstanceOf(RedisLockError);
      // Before: ['eval'], the call sent again after the close.
      expect(sent).toEqual([]);
      // Nothing written, nothing claimed.
      expect(await own.redis().exists('data:{fenced}', '{fenced}:fence')).toBe(0);
    } finally {
      own.server().resume();
    }
  });
});
