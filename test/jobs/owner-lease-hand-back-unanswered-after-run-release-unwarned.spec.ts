/**
 * Found by review (forty-seventh session): at app.close() with Redis cut off, an @OnOneInstance()
 * job's run lock release went unanswered, so the wait for the running jobs spent all of
 * shutdownTimeout, and JobLockOrchestrator.handBack (lib/scheduling/job-lock.orchestrator.ts) then
 * sent the owner lease's release without waiting for it ("LockService's own shutdown waits for
 * it") and never said what became of it: LockService's shutdown ended it unanswered, and nothing
 * was logged. The run lock's failure was warned about, the lease's was not, while it stays in
 * Redis for its whole ttl and no other instance runs the job meanwhile. docs/jobs-and-leaders.md,
 * "Shutdown": "when Redis does not answer the release within what is left of it (cut off,
 * frozen), the close goes on, says so in a warning, and the lease expires on its own" (the
 * leader's release says so in the same case).
 */
import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, WithoutOverlapping } from '../../lib/index.js';
import { FaultProxy } from '../../explore/real/fault-proxy.mjs';
import { redisUrl, useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('app.close() with an @OnOneInstance() job running while Redis is cut off', () => {
  useRedis();
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  for (const job of ['stops on its signal', 'ignores its signal'] as const) {
    it(`warns that the owner lease was not handed back (the job ${job})`, async () => {
      proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
      const url = new URL(redisUrl());
      url.port = String(proxy.port);

      @Injectable()
      class Export {
        started = false;
        constructor(readonly locks: LockService) {}
        @OnOneInstance({ ttl: '60s' })
        @WithoutOverlapping()
        async run(): Promise<void> {
          this.started = true;
          const { signal } = this.locks.current()!;
          if (job === 'ignores its signal') await new Promise(() => undefined);
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        }
      }
      const app = await startJobApp([Export], { redis: url.toString(), shutdownTimeout: 600 });
      void app.get<Export>(Export).run();
      await expect.poll(() => app.get<Export>(Export).started).toBe(true);
      proxy.cut();
      await app.close();
      const warnings = app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
      // Was: no line names the lease "Export.run:owner" (only the run lock's release, or the job still running).
      expect(warnings.filter((message) => message.includes('"Export.run:owner"'))).toEqual([expect.stringMatching(/^Could not hand the lease "Export\.run:owner" back \(.+\); it expires on its own\.$/)]);
    });
  }
});
