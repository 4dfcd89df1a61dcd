/**
 * Found by review (thirty-ninth session): `LockConflictInterceptor` answered a request whose lock
 * or read Redis did not answer (frozen here by SIGSTOP; a network cut that resets nothing looks
 * the same) 503 without `Retry-After`, so a client had nothing but its own guess to space its
 * retries by, where RFC 9110 gives a 503 this header for that. It now sends `Retry-After: 1`, the
 * bound the library gives an unanswered attempt, on Express and Fastify alike; a 409 (busy) gets
 * none, since when the holder lets go is not known to a waiter (docs/locks.md, "Busy over HTTP").
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { useOwnRedis } from '../support/redis.js';

@Controller('orders')
class OrdersController {
  constructor(private readonly locks: LockService) {}

  @Get('ship')
  @Locked('order:1', { waitTimeout: 0 })
  async ship(): Promise<string> {
    return 'shipped';
  }

  @Get('try')
  async try(): Promise<string> {
    const lock = await this.locks.tryAcquire('order:2');
    await lock?.release();
    return lock === null ? 'busy' : 'done';
  }
}

// One server for both platforms, its own since it is frozen.
const own = useOwnRedis();

describe.each([
  ['express', () => undefined],
  ['fastify', () => new FastifyAdapter()],
])('LockConflictInterceptor on %s', (_platform, adapter) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    own.server().resume();
    await app?.close();
    app = undefined;
  });

  it('answers 503 with Retry-After when Redis does not answer, 409 without', async () => {
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: own.url() })], controllers: [OrdersController] }, { adapter: adapter() });
    const url = await listenOnLoopback(app);
    const answer = async (path: string) => {
      const response = await fetch(`${url}/orders/${path}`);
      return { status: response.status, retryAfter: response.headers.get('retry-after') };
    };
    expect(await answer('try')).toEqual({ status: 200, retryAfter: null });
    const holder = await app.get(LockService).acquire('order:1');
    expect(await answer('ship')).toEqual({ status: 409, retryAfter: null });
    await holder.release();
    own.server().pause();
    expect(await Promise.all([answer('ship'), answer('try')])).toEqual([
      { status: 503, retryAfter: '1' },
      { status: 503, retryAfter: '1' },
    ]);
  });
});
