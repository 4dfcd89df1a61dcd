/**
 * Defect (regression of today's fix e3cb75f, "a skipped @Locked Observable route over HTTP"): the
 * global LockConflictInterceptor now pipes every `@Locked(..., { onBusy: 'skip' })` HTTP route
 * through `defaultIfEmpty(undefined)` (lib/lock-conflict.interceptor.ts intercept), SSE routes
 * included. On an `@Sse()` route the skip used to end the event stream empty; now the interceptor
 * emits `undefined` into it, which Nest writes as an event of its own (`id: 1`, no data): every
 * client of a skipped stream receives a bogus event and an EventSource's lastEventId moves to 1,
 * sent back as Last-Event-ID on reconnect.
 *
 * Promise: docs/locks.md `onBusy`: "'skip' does not run the method and resolves undefined (an
 * Observable completes empty; a route answers 200 with no body either way ...)".
 */
import { Controller, Module, Param, Sse, type INestApplication, type MessageEvent } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Observable, of } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockModule } from '../../lib/index.js';
import { listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Controller('feeds')
class FeedsController {
  @Sse('prices/:id')
  @Locked('feed:<0>', { onBusy: 'skip', waitTimeout: 0 })
  prices(@Param('id') id: string): Observable<MessageEvent> {
    return of({ data: { id } });
  }
}

describe('a skipped @Locked SSE route', () => {
  useRedis();
  let app: INestApplication;
  let base: string;
  const logs = new CapturedLogs();
  beforeAll(async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], controllers: [FeedsController] })
    class AppModule {}
    app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: logs, forceCloseConnections: true });
    base = await listenOnLoopback(app);
  });
  afterAll(() => app?.close());

  it('streams its events when it runs', async () => {
    const response = await fetch(`${base}/feeds/prices/1`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('data: {"id":"1"}');
  });

  it('ends its stream with no event when skipped', async () => {
    const lock = await app.get(LockService).acquire('feed:1');
    try {
      const response = await fetch(`${base}/feeds/prices/1`);
      expect(response.status).toBe(200);
      // Fails: "id: 1" (an event with no data), made by the interceptor's defaultIfEmpty(undefined).
      expect((await response.text()).trim()).toBe('');
    } finally {
      await lock.release();
    }
  });
});
