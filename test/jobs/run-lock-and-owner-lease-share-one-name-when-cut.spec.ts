import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, WithoutOverlapping, type LockEvent } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// docs/jobs-and-leaders.md, "Names": the run lock is named `Class.method`, the lease
// `Class.method:owner`. Names are cut to 128 characters, and bindJob cuts `where + ':owner'`
// after appending the suffix: for a `Class.method` over 128 characters both names come out
// the same, so metrics (lock.active, lock.hold.duration, lock.skipped by lock.name) and events
// add the owner lease's series into the run lock's, and an `other-owner` skip reads like a
// `held-elsewhere` one's lock.
describe('a job whose Class.method is over 128 characters', () => {
  useRedis();

  it('still names its owner lease apart from its run lock', async () => {
    @Injectable()
    class ReconcileWarehouseStockLevelsAgainstTheErpSystemForEveryRegionalDistributionCentreAndReportTheDifferencesToTheOperationsTeamEveryNight {
      @OnOneInstance({ key: 'reconcile', ttl: '10s' })
      @WithoutOverlapping()
      async run(): Promise<void> {}
    }
    const Job = ReconcileWarehouseStockLevelsAgainstTheErpSystemForEveryRegionalDistributionCentreAndReportTheDifferencesToTheOperationsTeamEveryNight;
    expect(`${Job.name}.run`.length).toBeGreaterThan(128);
    const app = await startJobApp([Job]);
    const acquired: LockEvent[] = [];
    app.get<LockService>(LockService).events$.subscribe((event) => event.type === 'acquired' && acquired.push(event));
    await app.get<InstanceType<typeof Job>>(Job).run();
    const names = new Map(acquired.map((event) => [event.key, event.name]));
    expect([...names.keys()].sort()).toEqual(['reconcile', 'reconcile:owner']);
    // Fails: both are 'Reconcile…Tea…' (127 characters and an ellipsis), the ':owner' cut off.
    expect(names.get('reconcile:owner')).not.toBe(names.get('reconcile'));
    expect(names.get('reconcile:owner')!.endsWith(':owner')).toBe(true);
  });
});
