/**
 * docs/configuration.md, "Shutdown: what app.close() does": no code awaiting Redis (an HTTP
 * request the server waits for before it closes) holds the close up past `shutdownTimeout`.
 *
 * Found by review (session 42): a readiness probe's `RedisLockHealthIndicator.isHealthy()` in
 * flight when Redis froze awaited its PING for the check's whole `timeout` (up to 60 s): Nest's
 * HTTP server close waits for that request, and the module's connection is closed only in
 * onApplicationShutdown, after it, so `app.close()` lasted as long as the check's `timeout`
 * instead of `shutdownTimeout`. The check in flight now ends with shutdown's first phase, as
 * `isLocked()` and `inspect()` do, and reports `down` (the application is closing).
 */
import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly redisLock: RedisLockHealthIndicator,
  ) {}

  @Get('ready')
  @HealthCheck()
  ready() {
    // A generous timeout, as a probe against a slow network might give: far above shutdownTimeout.
    return this.health.check([() => this.redisLock.isHealthy('redis-lock', { timeout: '60s' })]);
  }
}

describe('app.close() while a readiness check waits for a frozen Redis', () => {
  const own = useFrozenRedis();

  it('ends within shutdownTimeout, and the check in flight answers down, the application closing', { timeout: 60_000 }, async () => {
    const app = await createHttpApp({
      imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s' })],
      controllers: [HealthController],
      providers: [RedisLockHealthIndicator],
    }, { logs: new CapturedLogs() });
    own.opened(app);
    const url = `${await listenOnLoopback(app)}/health/ready`;
    // Connected, and answered once, before the freeze.
    expect((await fetch(url)).status).toBe(200);
    own.server().pause();
    type Answer = { status: number; body: { error?: Record<string, { status: string; error?: string }> } };
    const inFlight = fetch(url).then(
      async (res): Promise<Answer> => ({ status: res.status, body: (await res.json()) as Answer['body'] }),
      (error: Error): Answer => ({ status: 0, body: { error: { fetch: { status: error.message } } } }),
    );
    await sleep(200);
    // shutdownTimeout is 1 s and the check's timeout 60 s: give the close 15 s.
    await closesWithin(app, Number(process.env.REVIEW_WAIT ?? 15_000));
    const answer = await inFlight;
    expect(answer.status).toBe(503);
    expect(answer.body.error?.['redis-lock']).toMatchObject({ status: 'down', error: expect.stringMatching(/shutting down/) });
  });
});
