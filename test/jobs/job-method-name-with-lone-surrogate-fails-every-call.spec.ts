import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { OnOneInstance, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// The explorer checks at startup the keys a job locks at each call, "or the job would fail at
// every call" (lock-scheduling.explorer.ts). The job's lock names are made from its
// `Class.method` too (bindJob: runName, ownerName), and LockOptions.name refuses a lone
// surrogate (checkLockNaming). A method whose name holds one (a computed name cut from an
// emoji), given an explicit, well-formed key, starts fine and then fails every call with an
// InvalidLockOptionsError about a `name` option the user never gave.
describe('a job method whose name holds a lone surrogate, with a well-formed key', () => {
  const redis = useRedis();
  const method = 'sync\uD83D';

  it('runs (or is refused at startup), never failing each call over its lock name', async () => {
    let runs = 0;
    @Injectable()
    class SurrogateJob {
      @OnOneInstance({ key: 'surrogate-job', ttl: '2s' })
      @WithoutOverlapping()
      async [method](): Promise<void> {
        runs++;
      }
    }
    let started: Awaited<ReturnType<typeof startJobApp>> | undefined;
    let startupError: unknown;
    try {
      started = await startJobApp([SurrogateJob]);
    } catch (error) {
      startupError = error;
    }
    if (started === undefined) {
      // Acceptable: refused at startup, naming the method.
      expect(String(startupError)).toContain('SurrogateJob');
      return;
    }
    const job = started.get(SurrogateJob) as unknown as Record<string, () => Promise<void>>;
    // Fails: InvalidLockOptionsError: Option "name" must be a well-formed string ..., got "SurrogateJob.sync\ud83d:owner" (no method named).
    await expect(job[method]!()).resolves.toBeUndefined();
    expect(runs).toBe(1);
    await started.close();
    expect(await redis.keys('lock:{surrogate-job}')).toEqual([]);
  });
});
