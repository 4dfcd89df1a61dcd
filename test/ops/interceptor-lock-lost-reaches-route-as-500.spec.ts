/**
 * Defect: a `LockLostError` that reaches a route (a request in flight at `app.close()` whose
 * handler rethrows `lock.signal.reason`; a `@Locked` handler whose lock was lost mid-work) is
 * answered 500 with a Nest ERROR log and its stack, per request, although the interceptor answers
 * 503 for a closing application's refusals and for a Redis that did not answer, and a multi-key
 * call whose part was taken away 409.
 *
 * Promise (docs/locks.md "Busy over HTTP", what the interceptor maps): by reason,
 * - `shutdown`: 503 without `Retry-After`, as a wait the shutdown ended (a retry goes to another
 *   instance at once);
 * - `expired` (the lease ran out unrenewed: Redis out of reach, the event loop blocked): 503 with
 *   `Retry-After: 1`, as for a Redis that did not answer (a lock taken with `autoRenew: false`
 *   whose work outlived its ttl: a 500, see interceptor-unrenewed-lease-run-out-answered-503.spec.ts);
 * - `refused` (Redis no longer holds it for this owner: deleted, evicted, taken over): 409, as a
 *   multi-key part lost so; refused for good (NOPERM, EVALSHA renamed: its `cause` says what to
 *   fix) stays a 500, as an acquire refused so does: the operator's to fix, logged;
 * - `stepped-down`: 503 without `Retry-After` (the instance stopped leading).
 * Never the key (without `exposeKeyInHttpErrors`), never an ERROR log for the mapped ones.
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, LockService, Locked, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

let redis: Redis;
/** Resolves once the shutdown route holds its lock. */
let started: () => void = () => undefined;

/** Holds the event loop for `ms`, as a long synchronous computation does: no timer, no reply runs meanwhile. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

@Controller('work')
class WorkController {
  constructor(private readonly locks: LockService) {}

  /** Works until told to stop, then rethrows why, as a long request should. */
  @Get('shutdown')
  @Locked('work:shutdown')
  async shutdown(): Promise<string> {
    const lock = this.locks.current()!;
    started();
    await aborted(lock.signal);
    lock.signal.throwIfAborted();
    return 'done';
  }

  /** The key goes away behind the holder's back (an eviction, a force release): its extension is refused. */
  @Get('refused')
  @Locked('work:refused', { waitTimeout: 0 })
  async refused(): Promise<string> {
    const lock = this.locks.current()!;
    await redis.del('lock:{work:refused}');
    await lock.extend().catch(() => undefined);
    lock.signal.throwIfAborted();
    return 'done';
  }

  /**
   * A renewed lease runs out under the work: the event loop blocked past it, so no renewal went
   * out in time (one taken with `autoRenew: false` that the work outlived is the application's to
   * fix, a 500: interceptor-unrenewed-lease-run-out-answered-503.spec.ts).
   */
  @Get('expired')
  @Locked('work:expired', { ttl: 200, waitTimeout: 0 })
  async expired(): Promise<string> {
    const lock = this.locks.current()!;
    blockEventLoop(1_000);
    await aborted(lock.signal);
    lock.signal.throwIfAborted();
    return 'done';
  }

  @Get('stepped-down')
  steppedDown(): never {
    throw new LockLostError('work:leader', 7, 'stepped-down');
  }

  @Get('expired-refused-for-now')
  expiredRefusedForNow(): never {
    throw new LockLostError('work:loading', 7, 'expired', true, undefined, new Error('LOADING Redis is loading the dataset in memory'));
  }

  @Get('refused-for-good')
  refusedForGood(): never {
    throw new LockLostError('work:acl', 7, 'refused', true, new RedisLockError("NOPERM this user has no permissions to run the 'evalsha' command."));
  }
}

describe('LockConflictInterceptor and a LockLostError reaching a route', () => {
  redis = useRedis();
  let app: INestApplication | undefined;
  let logs: CapturedLogs;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(): Promise<string> {
    logs = new CapturedLogs();
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], controllers: [WorkController] }, { logs, logger: logs });
    return `${await listenOnLoopback(app)}/work`;
  }

  async function answer(response: Response): Promise<{ status: number; retryAfter: string | null; message: string }> {
    const body = (await response.json()) as { message: string };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), message: body.message };
  }

  it("answers 503 without Retry-After for a request in flight at app.close() (reason 'shutdown'), logging no error", async () => {
    const url = await start();
    const holding = new Promise<void>((resolve) => (started = resolve));
    const response = fetch(`${url}/shutdown`);
    await holding;
    const closing = app!.close();
    const got = await answer(await response);
    await closing;
    app = undefined;
    expect(got).toEqual({ status: 503, retryAfter: null, message: 'The lock service is shutting down. Try again later.' });
    expect(logs.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it("answers 503 with Retry-After: 1 for a lease that ran out under the work (reason 'expired')", async () => {
    const url = await start();
    const got = await answer(await fetch(`${url}/expired`));
    expect(got.status).toBe(503);
    expect(got.retryAfter).toBe('1');
    expect(got.message).not.toContain('work:expired');
    // The library's own loss log ('lock lost during renewal: ...') only, not Nest's for the route's error.
    expect(logs.lines.filter((line) => line.level === 'error' && !line.message.startsWith('lock lost'))).toEqual([]);
  });

  it("answers 503 with Retry-After: 1 for a lease that ran out while Redis refused its renewals for now (LOADING, its cause)", async () => {
    const url = await start();
    const got = await answer(await fetch(`${url}/expired-refused-for-now`));
    expect(got.status).toBe(503);
    expect(got.retryAfter).toBe('1');
    expect(got.message).not.toContain('work:loading');
    expect(logs.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it("answers 409 for a lock Redis no longer held for the request (reason 'refused'), not naming the key", async () => {
    const url = await start();
    const got = await answer(await fetch(`${url}/refused`));
    expect(got.status).toBe(409);
    expect(got.retryAfter).toBeNull();
    expect(got.message).not.toContain('work:refused');
  });

  it("answers 503 without Retry-After for a leader's step-down (reason 'stepped-down')", async () => {
    const url = await start();
    const got = await answer(await fetch(`${url}/stepped-down`));
    expect(got.status).toBe(503);
    expect(got.retryAfter).toBeNull();
    expect(got.message).not.toContain('work:leader');
  });

  it('leaves a renewal refused for good (its cause says what to fix) a 500 that Nest logs', async () => {
    const url = await start();
    const response = await fetch(`${url}/refused-for-good`);
    expect(response.status).toBe(500);
    expect(logs.lines.some((line) => line.level === 'error' && line.message.includes('was lost'))).toBe(true);
  });
});
