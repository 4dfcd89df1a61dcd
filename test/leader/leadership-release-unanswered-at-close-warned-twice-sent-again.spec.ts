/**
 * Found by review (twenty-ninth session): at app.close() with Redis cut off, a leader's release is warned about twice, and the
 * second warning promises what will not happen. `LeaderElectionRunner.stop()` warns when the
 * release is not answered within shutdownTimeout ("... could not release the leadership ... (no
 * answer from Redis within shutdownTimeout, 300 ms); it expires on its own."); the release itself
 * (`releaseLease()`) then fails when LockService's shutdown ends it, and its catch warns again:
 * "... could not release the leadership ... (Redis did not answer the release ... before the
 * application's shutdown ended ...); it is sent again shortly, or expires on its own." The
 * application has closed: nothing sends it again. The job side's hand-back (`handBack`) warns once.
 * lib/scheduling/leader-election.runner.ts: stop() (the settleWithin on `released`) and releaseLease().
 */
import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElection, type OnLeadershipAcquired } from '../../lib/index.js';
import { FaultProxy } from '../../explore/real/fault-proxy.mjs';
import { redisUrl, useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

describe('app.close() of a leader with Redis cut off', () => {
  useRedis();
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    proxy?.heal();
    await proxy?.close();
    proxy = undefined;
  });

  it('warns once about the unanswered release, and promises no resend after the close', async () => {
    let leading = false;
    @LeaderElection('cut-off-at-close', { ttl: '60s' })
    @Injectable()
    class Hub implements OnLeadershipAcquired {
      onLeadershipAcquired(): void {
        leading = true;
      }
    }
    proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
    const url = new URL(redisUrl());
    url.port = String(proxy.port);
    const app = await startJobApp([Hub], { redis: url.toString(), shutdownTimeout: 300 });
    await expect.poll(() => leading).toBe(true);
    proxy.cut();
    await app.close();
    // Let the release's own failure, ended by LockService's shutdown, be logged.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const warnings = app.logs.lines.filter((line) => line.message.includes('could not release the leadership')).map((line) => line.message);
    // Was: two warnings, the second ending "it is sent again shortly, or expires on its own."
    expect(warnings).toEqual([`Hub could not release the leadership "cut-off-at-close" (no answer from Redis within shutdownTimeout, 300 ms); it expires on its own.`]);
    expect(warnings.filter((message) => message.includes('sent again'))).toEqual([]);
  });
});
