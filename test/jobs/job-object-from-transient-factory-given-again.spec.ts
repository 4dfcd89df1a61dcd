/**
 * Found by review of d47deee: the fix for "an object given to a later application keeps the first one's
 * closed orchestrator" checks `given.shutDown` for singleton providers only
 * (lock-scheduling.explorer.ts ~L154). The new path for request-scoped and transient factories
 * (`equipMade`) keeps any orchestrator the object has (`instanceof JobLockOrchestrator`), closed or
 * not: a transient (or request-scoped) factory that returns one module-level object, used by one
 * application and then by the next, runs nothing in the second: every call is skipped as
 * `shutting-down` on the closed application's stream.
 */
import { Inject, Injectable, Scope } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, WithoutOverlapping, type LockSkippedEvent } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

describe('an object with job methods a transient factory returns to one application, then to the next', () => {
  useRedis();

  class Exporter {
    runs = 0;
    @WithoutOverlapping({ key: 'transient-given-again', ttl: '5s' })
    async run(): Promise<string> {
      this.runs++;
      return 'ran';
    }
  }

  it('runs its calls in each application', async () => {
    const shared = new Exporter();
    @Injectable()
    class Holder {
      constructor(@Inject('EXPORTER') readonly exporter: Exporter) {}
    }
    const results: unknown[] = [];
    for (let round = 0; round < 2; round++) {
      const app = await startJobApp([{ provide: 'EXPORTER', scope: Scope.TRANSIENT, useFactory: () => shared }, Holder]);
      const skips: LockSkippedEvent[] = [];
      app.get<LockService>(LockService).events$.subscribe((event) => event.type === 'skipped' && skips.push(event));
      results.push({ value: await app.get<Holder>(Holder).exporter.run(), skips: skips.map((skip) => skip.reason) });
      await closeNow(app);
    }
    expect({ results, runs: shared.runs }).toEqual({
      results: [
        { value: 'ran', skips: [] },
        { value: 'ran', skips: [] },
      ],
      runs: 2,
    });
  });
});
