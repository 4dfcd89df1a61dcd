// docs/jobs-and-leaders.md, "Skipped calls": a call that does not run "resolves undefined", with
// a `skipped` event; reason `shutting-down`: "the application is closing | nothing: the next
// instance runs the next tick". docs/locks.md: a wait that shutdown ends rejects with
// LockNotAcquiredError (fix 14b76a2), never a plain error.
//
// What happens: a @WithoutOverlapping call whose run lock's tryAcquire() is on its way to Redis
// when app.close() begins (Redis slow for a moment, a tick right at a rolling deploy). The
// orchestrator's onModuleDestroy only marks `closing`; LockService's shutdown then ends the
// attempt with its bare shutdown reason (LockManager.tryAcquire rethrows it: the 14b76a2 fix
// converts it only in Acquisition.giveUp), and JobLockOrchestrator.take() lets it escape: the job
// call rejects with RedisLockError "LockService shut down ... while waiting for a lock." (a
// @Cron tick logs it as an error), and no `skipped` event is emitted.
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, WithoutOverlapping } from '../../lib/index.js';
import { LAST_ATTEMPT_GRACE_MS } from '../../lib/core/engine/waiter-timing.js';
import { blockRedis } from '../support/block-redis.js';
import { useOwnRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

describe('a @WithoutOverlapping call whose run lock attempt is in flight when the application closes', () => {
  const { url } = useOwnRedis();

  it('is skipped (shutting-down) and resolves undefined, not rejected with a RedisLockError', { timeout: 30_000 }, async () => {
    @Injectable()
    class Sweep {
      runs = 0;
      @WithoutOverlapping({ ttl: '10s' })
      async run(): Promise<string> {
        this.runs++;
        return 'ran';
      }
    }
    const app = await startJobApp([Sweep], { redis: url() });
    const locks = app.get<LockService>(LockService);
    await locks.isLocked('s15f-warm');
    const sweep = app.get<Sweep>(Sweep);
    const { ended } = await blockRedis(url(), LAST_ATTEMPT_GRACE_MS * 4);
    const call = sweep.run().then(
      (value) => ({ value }),
      (error: unknown) => ({ error: `${(error as Error).constructor.name}: ${(error as Error).message}` }),
    );
    await closeNow(app);
    const outcome = await call;
    await ended;
    expect({ outcome, runs: sweep.runs }).toEqual({ outcome: { value: undefined }, runs: 0 });
  });
});
