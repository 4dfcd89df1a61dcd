/**
 * docs/configuration.md, "Shutdown: what app.close() does": the module "gives every held lock
 * back ... All of that within `shutdownTimeout`. ... (unless Redis did not answer within
 * `shutdownTimeout`; the lease then expires on its own)". docs/locks.md, `release()`: a release
 * Redis did not answer ("no answer by the end of the lease, as from a frozen server ... since
 * the client has no command timeout") rejects with a `RedisLockError`.
 *
 * docs/locks.md, "Busy over HTTP": "`503 Service Unavailable` when Redis did not answer, or when
 * the application closed while the request waited".
 *
 * Found by review; before the fix, a @Locked route whose method is running when shutdown gives its lock
 * back (HeldLock.shutdown) stops on its signal, as it should; its release (releaseThen) joins shutdown's
 * give-back, which had no bound at all: not the lease, not
 * shutdownTimeout. On a frozen Redis it stays pending until the connection is closed, and the
 * module closes its connection only in onApplicationShutdown. Nest disposes the HTTP server
 * between beforeApplicationShutdown and onApplicationShutdown, and the server's close waits for
 * that request: app.close() never ends for as long as Redis is frozen (here: far past
 * shutdownTimeout and past the lock's whole lease). The second case needs no user code at all: a
 * multi-key route waiting for its second key at close. Shutdown ends the wait and gives back the
 * first key; acquireAll() then awaits giveBack() of that key, whose release() is the same
 * unbounded give-back, so the request is never answered 503 and app.close() never ends. Once
 * Redis resumes, both end at once (the request answers, close resolves). The third case is the
 * bounded cousin: a route whose release was already on its way when the close began holds
 * app.close() until the end of its lease (about 11 s here with an 8 s ttl and a 1 s
 * shutdownTimeout; the default ttl is 30 s), since shutdown's wait for a release in flight is
 * bounded by shutdownTimeout but the holder's own wait is not.
 *
 * Older than 55ff00a. Now a release Redis has not answered when shutdown's wait ends (its
 * `shutdownTimeout`) ends with it: the holder's rejects with a `RedisLockError`, and shutdown's
 * own give-back resolves (its lease ends on its own in Redis).
 */
import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule } from '../../lib/index.js';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs, createLockApp, sleep } from '../support/lock-app.js';

let entered: () => void = () => undefined;
let openGate: () => void = () => undefined;
let gate = Promise.resolve();

@Controller('rb')
class SlowController {
  constructor(private readonly locks: LockService) {}

  @Get('slow')
  @Locked('rb:slow', { ttl: 2_000 })
  async slow(): Promise<string> {
    const signal = this.locks.current()!.signal;
    entered();
    // Well-behaved work: it stops as soon as its lock's signal aborts (shutdown tells it so).
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return 'stopped';
  }

  @Get('gated')
  @Locked('rb:gated', { ttl: 8_000 })
  async gated(): Promise<string> {
    entered();
    await gate;
    return 'done';
  }

  @Get('both')
  @Locked(['rb:x', 'rb:y'], { ttl: 2_000, waitTimeout: 10_000 })
  async both(): Promise<string> {
    return 'done';
  }
}

describe('app.close() while a @Locked route runs and Redis is frozen', () => {
  const own = useFrozenRedis();

  /** Serves SlowController and sends a request to `/rb/<route>`; resolves once its method runs. */
  const serveAndRequest = async (route: string) => {
    const app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s' })],
      controllers: [SlowController],
    }, { logger: new CapturedLogs() });
    own.opened(app);
    const url = `${await listenOnLoopback(app)}/rb/${route}`;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const request = fetch(url).then(
      (res) => res.status,
      (error: Error) => error.message,
    );
    await inside;
    return { app, request };
  };

  it('ends within shutdownTimeout (and well within the lease), answering the request', { timeout: 30_000 }, async () => {
    const { app, request } = await serveAndRequest('slow');
    own.server().pause();
    // shutdownTimeout is 1 s and the lock's whole lease 2 s: give it 8 s.
    await closesWithin(app, 8_000);
    expect(await request).toBeTypeOf('number');
  });

  // The same with no user code running at all: a multi-key route waits for its second key
  // (another instance holds it) when the close begins. Shutdown ends the wait and gives back the
  // first key (HeldLock.shutdown); acquireAll then awaits giveBack() of that key, whose
  // release() is shutdown's unbounded give-back.
  it('ends while a multi-key route waits for its second key', { timeout: 30_000 }, async () => {
    const other = await createLockApp({ redis: own.url(), shutdownTimeout: '500ms' });
    try {
      await other.locks.acquire('rb:y', { ttl: '30s' });
      const app = await createHttpApp({
        imports: [RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s' })],
        controllers: [SlowController],
      }, { logger: new CapturedLogs() });
      own.opened(app);
      const url = `${await listenOnLoopback(app)}/rb/both`;
      const request = fetch(url).then(
        (res) => res.status,
        (error: Error) => error.message,
      );
      // The request holds rb:x and waits for rb:y.
      await expect.poll(() => own.redis().exists('lock:{rb:x}'), { timeout: 5_000 }).toBe(1);
      await sleep(300);
      own.server().pause();
      await closesWithin(app, 8_000);
      expect(await request).toBe(503);
    } finally {
      own.server().resume();
      await other.close();
    }
  });

  // Bounded, but by the lease rather than shutdownTimeout: the method returned just before the
  // close, its release is on its way to the frozen Redis, and shutdown (HeldLock.shutdown) only
  // waits for it within shutdownTimeout. The request waits for the release until the end of the
  // lease (8 s here, 30 s by default), and app.close() with it.
  it("ends within shutdownTimeout while a route's release is on its way", { timeout: 30_000 }, async () => {
    gate = new Promise<void>((resolve) => (openGate = resolve));
    const { app, request } = await serveAndRequest('gated');
    own.server().pause();
    openGate();
    await sleep(100);
    // shutdownTimeout is 1 s; the lease 8 s.
    await closesWithin(app, 4_000);
    expect(await request).toBeTypeOf('number');
  });
});
