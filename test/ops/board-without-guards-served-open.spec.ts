/**
 * Found by review (thirty-third session): a lock board registered without `guards` (forgotten,
 * or `guards: []` from a configuration that left it empty) started and served every lock's key,
 * label, host and pid, and the live feed of the process' lock events, to anyone who could reach
 * the application; only a startup warning said so. The house rule is that everything the library
 * serves over HTTP is guarded: a board must name its guards, or say on purpose that something
 * else protects it (`allowWithoutGuards: true`: a global guard, a private network). A release by
 * force without guards was already refused that way; a read-only board was not.
 */
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule, type LockBoardAsyncOptions, type LockBoardOptions } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('a lock board without guards', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Starts an application with `board`; what an anonymous GET of the lock list got, or why startup refused. */
  async function anonymousRead(board: () => ReturnType<typeof RedisLockBoardModule.register>): Promise<{ refused?: string; where?: string; status?: number; leaked?: boolean }> {
    try {
      app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), board()] });
      const url = await listenOnLoopback(app);
      await app.get(LockService).acquire('payroll:emp-1234', { label: 'PayrollJob.run' });
      const response = await fetch(`${url}/locks/api/locks`);
      return { status: response.status, leaked: (await response.text()).includes('payroll:emp-1234') };
    } catch (error) {
      if (!(error instanceof InvalidLockOptionsError)) throw error;
      return { refused: error.option, where: error.message.split(':')[0] };
    }
  }

  it.each<[string, LockBoardOptions]>([
    ['no guards option', {}],
    ['an empty guards array', { guards: [] }],
    ['settings but no guards', { pageSize: 20, allowedHosts: ['127.0.0.1'] }],
  ])('is refused by register() naming "guards" (%s), not served to anyone', async (_case, options) => {
    expect(await anonymousRead(() => RedisLockBoardModule.register(options))).toEqual({ refused: 'guards', where: 'RedisLockBoardModule.register' });
  });

  it('is refused at startup by registerAsync() naming "guards", not served to anyone', async () => {
    const options: LockBoardAsyncOptions = { useFactory: () => ({ pageSize: 20 }) };
    expect(await anonymousRead(() => RedisLockBoardModule.registerAsync(options))).toEqual({ refused: 'guards', where: 'RedisLockBoardModule.registerAsync' });
  });

  it('the refusal says how to protect the board, or how to say that something else does', () => {
    expect(() => RedisLockBoardModule.register({})).toThrow(/Option "guards" must be .*allowWithoutGuards: true/s);
  });

  it('still starts when it says something else protects it (allowWithoutGuards), or when it has a guard', async () => {
    expect(await anonymousRead(() => RedisLockBoardModule.register({ allowWithoutGuards: true, allowedHosts: ['127.0.0.1'] }))).toEqual({ status: 200, leaked: true });
    await app!.close();
    app = undefined;
    expect(await anonymousRead(() => RedisLockBoardModule.register({ guards: [{ canActivate: () => false }] }))).toEqual({ status: 403, leaked: false });
  });
});
