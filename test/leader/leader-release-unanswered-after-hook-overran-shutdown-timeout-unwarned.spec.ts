/**
 * Found by review (forty-seventh session), beside the owner lease's
 * (test/jobs/owner-lease-hand-back-unanswered-after-run-release-unwarned.spec.ts): at app.close()
 * with Redis cut off, a leader whose onLeadershipAcquired ignores its signal uses all of
 * shutdownTimeout, and LeaderElectionRunner.stop (lib/scheduling/leader-election.runner.ts) then
 * sends the lease's release without waiting for it ("LockService's own shutdown waits for it")
 * and never says what became of it: LockService's shutdown ends it unanswered, and nothing is
 * logged, while the lease stays in Redis for its whole ttl and no other instance leads meanwhile.
 * The same release after hooks that returned in time is warned about ('could not release the
 * leadership ... (no answer from Redis within shutdownTimeout ...)'); docs/jobs-and-leaders.md,
 * "Shutdown": "when Redis does not answer the release within what is left of it (cut off, frozen),
 * the close goes on, says so in a warning, and the lease expires on its own".
 */
import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElection, type OnLeadershipAcquired } from '../../lib/index.js';
import { FaultProxy } from '../../explore/real/fault-proxy.mjs';
import { redisUrl, useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

describe('app.close() with a leader whose hook ignores its signal while Redis is cut off', () => {
  useRedis();
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('warns that the leadership was not released', async () => {
    proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
    const url = new URL(redisUrl());
    url.port = String(proxy.port);
    let started = false;
    @LeaderElection('deaf-feed', { ttl: '60s' })
    @Injectable()
    class DeafFeed implements OnLeadershipAcquired {
      async onLeadershipAcquired(): Promise<void> {
        started = true;
        await new Promise(() => undefined);
      }
    }
    const app = await startJobApp([DeafFeed], { redis: url.toString(), shutdownTimeout: 600 });
    await expect.poll(() => started).toBe(true);
    proxy.cut();
    await app.close();
    const warnings = app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings.some((message) => message.startsWith('The hooks of DeafFeed were still running 600 ms'))).toBe(true);
    // Was: no line says that the lease "deaf-feed" was not released.
    expect(warnings.filter((message) => message.includes('the leadership "deaf-feed"'))).toEqual([expect.stringMatching(/^DeafFeed could not release the leadership "deaf-feed" \(.+\); it expires on its own\.$/)]);
  });
});
