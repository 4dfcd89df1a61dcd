import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, RedisLockError } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// A job class provided with useFactory (or useValue) is found by the explorer at startup (its key
// is claimed, the startup succeeds), but Nest does property injection only for class providers,
// so the wrapper never gets its JobLockOrchestrator: every call, every @Cron tick, rejects with a
// RedisLockError saying the instance "must be created by Nest, in a module that imports
// RedisLockModule" (it was, in such a module). The job never runs, and the startup said nothing.
describe('a job method on a provider made by useFactory', () => {
  useRedis();

  it('is refused at startup, naming the job and the factory, or runs', async () => {
    class Reports {
      runs = 0;
      constructor(readonly locks: LockService) {}
      @OnOneInstance({ ttl: '10s' })
      async nightly(): Promise<string> {
        this.runs++;
        return 'ran';
      }
    }
    let startup: unknown;
    const app = await startJobApp([{ provide: Reports, useFactory: (locks: LockService) => new Reports(locks), inject: [LockService] }]).catch((error: unknown) => {
      startup = error;
      return undefined;
    });
    if (app === undefined) {
      // Acceptable: refused when the application starts, naming the job.
      expect(startup).toBeInstanceOf(RedisLockError);
      expect(String((startup as Error).message)).toContain('Reports.nightly');
      return;
    }
    const outcome = await app.get<Reports>(Reports).nightly().then(
      (value) => ({ value }),
      (error: unknown) => ({ error: (error as Error).message }),
    );
    // Fails: { error: '@OnOneInstance() method Reports.nightly has no lock service: the instance must be created by Nest, ...' }
    expect(outcome).toEqual({ value: 'ran' });
    expect(app.get<Reports>(Reports).runs).toBe(1);
  });
});
