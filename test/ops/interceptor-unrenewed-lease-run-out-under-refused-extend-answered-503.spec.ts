/**
 * Review of d652ab9d (session 51): a lock taken with `autoRenew: false` whose `extend()` Redis
 * refused for now (READONLY here: a master demoted to a replica; LOADING alike), its lease then run
 * out, is lost with reason `expired`, `renewed` false, the refusal its `cause` and its message
 * ("the lease ran out while Redis refused its renewals for now"). Through the interceptor that is
 * a 503 with `Retry-After: 1`, as a renewed lock's lease run out under such refusals: the work did
 * not outlive the ttl it chose, Redis refused to extend it, and a retry once Redis serves again
 * can succeed. Found so: a 500 that Nest logged, kept for an unrenewed lease the work outlived
 * (test/ops/interceptor-unrenewed-lease-run-out-answered-503.spec.ts), whose message names the
 * remedy; this one's names none.
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockLostError, LockService, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

let admin: Redis | undefined;
let extendError: unknown;
let loss: unknown;

@Controller('work')
class WorkController {
  constructor(private readonly locks: LockService) {}

  /** Work that extends its lease, refused READONLY, and goes on until the lease ran out. */
  @Get('refused-extend')
  async refusedExtend(): Promise<string> {
    return this.locks.using('refused-extend', async (lock) => {
      await admin!.replicaof('127.0.0.1', '1');
      await lock.extend().catch((error: unknown) => (extendError = error));
      await new Promise<void>((resolve) => (lock.signal.aborted ? resolve() : lock.signal.addEventListener('abort', () => resolve(), { once: true })));
      loss = lock.signal.reason;
      lock.signal.throwIfAborted();
      return 'done';
    }, { ttl: 1_000, autoRenew: false });
  }
}

describe('LockConflictInterceptor and an autoRenew: false lock whose extend() Redis refused for now', () => {
  const own = useOwnRedis();

  it('answers 503 with Retry-After: 1, the loss naming the refusal', { timeout: 30_000 }, async () => {
    admin = own.redis();
    onTestFinished(async () => {
      await admin!.replicaof('NO', 'ONE');
    });
    const logs = new CapturedLogs();
    const app: INestApplication = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: own.url(), isGlobal: true })], controllers: [WorkController] }, { logs, logger: logs });
    onTestFinished(() => app.close());
    const response = await fetch(`${await listenOnLoopback(app)}/work/refused-extend`);
    expect(String((extendError as Error | undefined)?.message)).toMatch(/READONLY/);
    expect(loss).toBeInstanceOf(LockLostError);
    expect(loss).toMatchObject({ reason: 'expired', renewed: false });
    expect((loss as Error).message).toMatch(/the lease ran out while Redis refused its renewals for now \(.*READONLY/);
    // Failed: 500, no Retry-After.
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
  });
});
