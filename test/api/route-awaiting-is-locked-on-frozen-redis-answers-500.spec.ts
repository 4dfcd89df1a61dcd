/**
 * Found by review (thirty-eighth session): a route that awaits `isLocked()` or `inspect()` while
 * Redis does not answer (frozen here by SIGSTOP; a network cut that resets nothing looks the
 * same) got, once the read's 1 s bound ran out, a 500 and an error log per request from Nest,
 * where a `@Locked` route whose wait Redis left unanswered gets 503 from `LockConflictInterceptor`
 * (docs/guarantees.md, "When Redis fails"). The interceptor answers such a read 503 too: the lock
 * service is unavailable, try again later.
 */
import { Controller, Get, Module } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { useFrozenRedis } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';

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
  const own = useFrozenRedis();

  // Both routes asked at once on one frozen Redis: each waits out its read's bound, together.
  it('GET /status/held and GET /status/holder each answer 503, naming no key', { timeout: 20_000 }, async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: own.url() })], controllers: [StatusController] })
    class AppModule {}
    const app = own.opened(await createHttpApp({ imports: [AppModule] }));
    const base = `${await listenOnLoopback(app)}/status`;
    const routes = ['held', 'holder'];
    for (const route of routes) expect((await fetch(`${base}/${route}`)).status).toBe(200);
    own.server().pause();
    const answers = await Promise.all(
      routes.map(async (route) => {
        const response = await fetch(`${base}/${route}`);
        const body = (await response.json()) as { message?: string };
        return { route, status: response.status, namesKey: body.message?.includes('import:') ?? false };
      }),
    );
    expect(answers).toEqual(routes.map((route) => ({ route, status: 503, namesKey: false })));
  });
});
