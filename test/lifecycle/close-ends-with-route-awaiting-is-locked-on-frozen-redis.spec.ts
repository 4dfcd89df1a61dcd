/**
 * docs/configuration.md, "Shutdown: what app.close() does": no code awaiting Redis (an HTTP
 * request the server waits for before it closes) holds the close up past `shutdownTimeout`.
 *
 * Carried over from review: a route that awaits `locks.isLocked()` or `locks.inspect()` (the
 * documented "is an import running?" check) while Redis is frozen awaited the store's read with
 * no bound at all. Nest's HTTP server close waits for that request, and the module's connection
 * is closed only in onApplicationShutdown, after it: `app.close()` did not end for as long as
 * Redis was frozen. Those reads now end with shutdown's first phase, as a lock's wait does.
 */
import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';

const seen: unknown[] = [];

@Controller('probe')
class ProbeController {
  constructor(private readonly locks: LockService) {}

  @Get('is-locked')
  async isLocked(): Promise<string> {
    try {
      return String(await this.locks.isLocked('import:{tenant-7}'));
    } catch (error) {
      seen.push(error);
      throw error;
    }
  }

  @Get('inspect')
  async inspect(): Promise<string> {
    try {
      return JSON.stringify(await this.locks.inspect('import:{tenant-7}'));
    } catch (error) {
      seen.push(error);
      throw error;
    }
  }
}

describe('app.close() while routes await isLocked() and inspect() on a frozen Redis', () => {
  const own = useFrozenRedis();
  afterEach(() => {
    seen.length = 0;
  });

  it('ends within shutdownTimeout, and both calls reject with a RedisLockError that says the application is closing', { timeout: 30_000 }, async () => {
    const app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s' })],
      controllers: [ProbeController],
    }, { logger: new CapturedLogs() });
    own.opened(app);
    const base = `${await listenOnLoopback(app)}/probe`;
    // Connected, and answered once, before the freeze.
    expect(await (await fetch(`${base}/is-locked`)).text()).toBe('false');
    own.server().pause();
    const requests = ['is-locked', 'inspect'].map((path) =>
      fetch(`${base}/${path}`).then(
        (res) => res.status,
        (error: Error) => error.message,
      ),
    );
    await sleep(200);
    // shutdownTimeout is 1 s: give it 6 s (nothing else bounds the reads).
    await closesWithin(app, Number(process.env.REVIEW_WAIT ?? 6_000));
    // Refused because the application is closing: 503, as a request waiting for a lock is answered.
    expect(await Promise.all(requests)).toEqual([503, 503]);
    expect(seen).toHaveLength(2);
    for (const error of seen) {
      expect(error).toBeInstanceOf(RedisLockError);
      expect((error as Error).message).toMatch(/^LockService shut down \(the application is closing\) while (isLocked|inspect)\("import:\{tenant-7\}"\) waited for Redis\.$/);
    }
  });
});
