/**
 * Review suspicion (jobs and leaders follow-up): a leader whose onLeadershipAcquired threw steps
 * down and gives the lease back; with Redis frozen that release is not answered, and the election's
 * hooks wait for it. An app.close() then waited shutdownTimeout for it and warned "The hooks of Hub
 * were still running 300 ms (shutdownTimeout) after its leadership's signal aborted for shutdown":
 * every hook had returned, and what the close waited for was Redis. The log says that now.
 * lib/scheduling/leader-election.runner.ts: stop() (its `overran` warning) and releaseLease().
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, type OnLeadershipAcquired } from '../../lib/index.js';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { startJobApp } from '../jobs/support.js';

describe('app.close() while a step-down release waits on a frozen Redis', () => {
  const frozen = useFrozenRedis();

  it('says the close waited for the release, not for the hooks', async () => {
    let leading = false;
    let fail!: () => void;
    const failed = new Promise<void>((resolve) => (fail = resolve));
    @LeaderElection('frozen-step-down', { ttl: '60s' })
    @Injectable()
    class Hub implements OnLeadershipAcquired {
      async onLeadershipAcquired(): Promise<void> {
        leading = true;
        await failed;
        throw new Error('cannot start the hub');
      }
    }
    const app = frozen.opened(await startJobApp([Hub], { redis: frozen.url(), shutdownTimeout: 300 }));
    await expect.poll(() => leading).toBe(true);
    frozen.server().pause();
    fail();
    await expect.poll(() => app.logs.has('error', 'onLeadershipAcquired of Hub threw')).toBe(true);
    await closesWithin(app, 20_000);
    // Let the release's own failure, ended by LockService's shutdown, be logged.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const warnings = app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    // Failed: ['The hooks of Hub were still running 300 ms (shutdownTimeout) after its leadership's signal aborted for shutdown.', ...]
    expect(warnings.filter((message) => message.includes('were still running'))).toEqual([]);
    expect(warnings.filter((message) => message.includes('release the leadership'))).toEqual([
      `Hub could not release the leadership "frozen-step-down" it stepped down from (no answer from Redis within shutdownTimeout, 300 ms); it expires on its own.`,
    ]);
  });
});
