/**
 * Review (HTTP answers), found after d2966d0: a route's wait for a lock (a `using()` with a
 * `waitTimeout`) made within an outer lock the request holds ends as soon as that outer lock is
 * lost (LockNotAcquiredError, its `cause` the outer lock's LockLostError), and the interceptor
 * answered every such end 503 with `Retry-After: 1`, whatever the loss. The same loss rethrown by
 * the route from the outer lock's signal is answered by why (d2966d0): an outer lock taken with
 * `autoRenew: false` whose lease ran out under the work is a 500, logged, its message saying what
 * to change (a retry would run out again), and one Redis no longer held for the request (deleted,
 * taken over) a 409. The wait's end is now answered as the loss that ended it is; a renewed
 * lease that ran out keeps its 503 with `Retry-After`.
 */
import { Controller, Get, Query, type INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

let redis: ReturnType<typeof useRedis>;

/** Holds the event loop for `ms`, as a long synchronous computation does: no timer, no reply runs meanwhile. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** The key the inner call waits for, held by another operation for the whole test. */
const INNER = 'work:inner';

@Controller('work')
class WorkController {
  constructor(private readonly locks: LockService) {}

  /** Waits for the inner key within an outer lock whose ttl (unrenewed) runs out meanwhile. */
  @Get('unrenewed')
  unrenewed(@Query('key') key: string): Promise<string> {
    return this.locks.using(key, () => this.locks.using(INNER, () => 'ran', { waitTimeout: 30_000 }), { ttl: 300, autoRenew: false });
  }

  /** Waits for the inner key within an outer lock that Redis stops holding for it (its key deleted). */
  @Get('refused')
  refused(@Query('key') key: string): Promise<string> {
    return this.locks.using(key, async () => {
      const inner = this.locks.using(INNER, () => 'ran', { waitTimeout: 30_000 });
      // Its renewal (a third of the ttl on) finds the key gone: lost, reason 'refused'.
      await redis.del(`lock:{${key}}`);
      return inner;
    }, { ttl: 600 });
  }

  /** Waits for the inner key within a renewed outer lock whose lease runs out while the event loop is blocked. */
  @Get('expired')
  expired(@Query('key') key: string): Promise<string> {
    return this.locks.using(key, async () => {
      const inner = this.locks.using(INNER, () => 'ran', { waitTimeout: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      blockEventLoop(1_000);
      return inner;
    }, { ttl: 200 });
  }
}

describe('LockConflictInterceptor and a wait ended by the loss of the outer lock the request held', () => {
  redis = useRedis();
  let app: INestApplication | undefined;
  let logs: CapturedLogs;
  let url: string;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(): Promise<void> {
    logs = new CapturedLogs();
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], controllers: [WorkController] }, { logs, logger: logs });
    url = `${await listenOnLoopback(app)}/work`;
    // Another operation holds the inner key: the route's call waits for it.
    await app.get(LockService).acquire(INNER, { ttl: 60_000 });
  }

  async function answer(route: string, key: string): Promise<{ status: number; retryAfter: string | null; message: string }> {
    const response = await fetch(`${url}/${route}?key=${encodeURIComponent(key)}`);
    const body = (await response.json()) as { message: string };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), message: body.message };
  }

  it('answers 500 without Retry-After when the outer lock was taken with autoRenew: false, and Nest logs what to change', { timeout: 30_000 }, async () => {
    await start();
    const got = await answer('unrenewed', 'work:outer-unrenewed');
    // Failed: { status: 503, retryAfter: '1' }.
    expect({ status: got.status, retryAfter: got.retryAfter }).toEqual({ status: 500, retryAfter: null });
    expect(got.message).not.toContain('work:');
    const nests = logs.lines.filter((line) => line.level === 'error' && !line.message.startsWith('lock lost'));
    expect(nests.some((line) => /autoRenew: false/.test(line.message) && /raise its ttl/.test(line.message))).toBe(true);
  });

  it('answers 409 when Redis no longer held the outer lock for the request, as that loss rethrown is', { timeout: 30_000 }, async () => {
    await start();
    const got = await answer('refused', 'work:outer-refused');
    // Failed: { status: 503, retryAfter: '1' }.
    expect({ status: got.status, retryAfter: got.retryAfter }).toEqual({ status: 409, retryAfter: null });
    expect(got.message).not.toContain('work:');
  });

  it('keeps 503 with Retry-After: 1 when a renewed outer lease ran out under a blocked event loop', { timeout: 30_000 }, async () => {
    await start();
    const got = await answer('expired', 'work:outer-expired');
    expect({ status: got.status, retryAfter: got.retryAfter }).toEqual({ status: 503, retryAfter: '1' });
    expect(got.message).not.toContain('work:');
    expect(logs.lines.filter((line) => line.level === 'error' && !line.message.startsWith('lock lost'))).toEqual([]);
  });
});
