import { Inject, Injectable, Scope } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, WithoutOverlapping, type LockSkippedEvent } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

// The explorer gives a useValue/useFactory instance with job methods its JobLockOrchestrator only
// when it has none (lock-scheduling.explorer.ts:154, `instanceof JobLockOrchestrator`), never
// asking whether that one is closed. An object handed to one application, then to the next one
// of the same process (one module-level object: the pattern of a test suite that builds an
// application per test, fixed for @Locked in test/lifecycle/locked-object-given-again-to-next-app-runs.spec.ts)
// keeps the first application's orchestrator, closed since: every call and every tick in the next
// application resolves undefined without running, skipped as `shutting-down` on the old
// application's event stream, and the new application sees nothing at all.
describe('an object with job methods given to one application, then to the next', () => {
  useRedis();

  class Exporter {
    runs = 0;
    @WithoutOverlapping({ key: 'given-again-export', ttl: '5s' })
    async run(): Promise<string> {
      this.runs++;
      return 'ran';
    }
  }

  @Injectable()
  class Holder {
    constructor(@Inject('EXPORTER') readonly exporter: Exporter) {}
  }

  it.each([
    ['useValue', (shared: Exporter) => [{ provide: 'EXPORTER', useValue: shared }]],
    ['a singleton useFactory', (shared: Exporter) => [{ provide: 'EXPORTER', useFactory: () => shared }]],
    // Found by review of d47deee: its check covered singleton providers only; a request-scoped or
    // transient factory's object (`equipMade`) kept the closed orchestrator.
    ['a transient useFactory injected into a singleton', (shared: Exporter) => [{ provide: 'EXPORTER', scope: Scope.TRANSIENT, useFactory: () => shared }]],
  ] as const)('runs its calls in each application (%s)', async (_how, providers) => {
    const shared = new Exporter();
    const results: unknown[] = [];
    for (let round = 0; round < 2; round++) {
      const app = await startJobApp([...providers(shared), Holder]);
      const skips: LockSkippedEvent[] = [];
      app.get<LockService>(LockService).events$.subscribe((event) => event.type === 'skipped' && skips.push(event));
      results.push({ value: await app.get<Holder>(Holder).exporter.run(), skips: skips.map((skip) => skip.reason) });
      await closeNow(app);
    }
    // Fails: the second application's call resolves undefined, unrun, and its events$ saw no skip.
    expect({ results, runs: shared.runs }).toEqual({
      results: [
        { value: 'ran', skips: [] },
        { value: 'ran', skips: [] },
      ],
      runs: 2,
    });
  });
});
