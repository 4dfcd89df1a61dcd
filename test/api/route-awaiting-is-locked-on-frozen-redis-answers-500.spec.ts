/**
 * Found by review (thirty-eighth session): a route that awaits `isLocked()` or `inspect()` while
 * Redis does not answer (frozen here by SIGSTOP; a network cut that resets nothing looks the
 * same) got, once the read's 1 s bound ran out, a 500 and an error log per request from Nest,
 * where a `@Locked` route whose wait Redis left unanswered gets 503 from `LockConflictInterceptor`
 * (docs/guarantees.md, "When Redis fails"). The interceptor answers such a read 503 too: the lock
 * service is unavailable, try again later.
 */
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { useOwnRedis } from '../support/redis.js';

@Controller('status')
class StatusController {
  constructor(private readonly locks: LockService) {}

  @Get('held')
  async held(): Promise<{ held: boolean }> {
    return { held: await this.locks.isLocked('import:<t>') };
  }

  @Get('holder')
  async holder(): Promise<{ held: boolean }> {
    return { held: (await this.locks.inspect('import:<t>')).held };
  }
}

describe('a route awaiting isLocked() or inspect() while Redis is frozen', () => {
  const own = useOwnRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    own.server().resume();
    await app?.close();
    app = undefined;
  });

  it.each(['held', 'holder'])('GET /status/%s answers 503, naming no key', { timeout: 20_000 }, async (route) => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: own.url() })], controllers: [StatusController] })
    class AppModule {}
    app = await createHttpApp({ imports: [AppModule] });
    const url = `${await listenOnLoopback(app)}/status/${route}`;
    expect((await fetch(url)).status).toBe(200);
    own.server().pause();
    const response = await fetch(url);
    const body = (await response.json()) as { message?: string };
    expect(response.status).toBe(503);
    expect(body.message).not.toContain('import:');
  });
});
