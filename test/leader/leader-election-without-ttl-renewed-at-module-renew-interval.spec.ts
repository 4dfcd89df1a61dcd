// lib/interfaces/scheduling.interface.ts (LeaderElectionOptions.ttl, the public API's own
// documentation): "Lease of the leadership, renewed by the leader every ttl/3; the others try to
// take it every ttl/3." docs/jobs-and-leaders.md says the same of the jobs' locks ("a job's locks
// are renewed every third of their ttl whatever the module's renewInterval"), and
// lib/scheduling/job-lock.orchestrator.ts (lockOptions) always passes a ttl for that reason.
//
// A @LeaderElection that gives no ttl of its own takes the module's ttl, as documented, but its
// tries (lib/scheduling/leader-election.runner.ts, take()) pass no ttl, so the term lock inherits
// the module's renewInterval instead of ttl/3. With forRoot({ ttl: '3s', renewInterval: '2900ms' })
// (valid: below ttl minus the drift margin) the leader renews once per 2.9 s of a 3 s lease
// (local deadline 2968 ms): a renewal that takes more than ~70 ms loses the leadership.
//
// Deterministic: the in-memory store of nestjs-redis-lock/testing on a manual clock. Renewals at
// ttl/3 (every 1000 ms, first at a random phase of 500 to 1000 ms) make at least 3 renewals in the
// first 3000 ms of the term; renewals every 2900 ms make exactly 1.
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockService, type Lock, type LockEvent, type OnLeadershipAcquired } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';

@Injectable()
@LeaderElection('s15c-feed') // no ttl: the module's (3 s)
class Feed implements OnLeadershipAcquired {
  terms = 0;
  onLeadershipAcquired(_lock: Lock): void {
    this.terms++;
  }
}

describe('@LeaderElection without a ttl of its own, under a module renewInterval', () => {
  it('is renewed every ttl/3, as LeaderElectionOptions documents (not at the module renewInterval)', async () => {
    const locks = new InMemoryLocks({ clock: 'manual' });
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockTestingModule.forRoot({ locks, ttl: '3s', renewInterval: '2900ms' })],
      providers: [Feed],
    }).compile();
    const app = moduleRef.createNestApplication();
    const renewals: LockEvent[] = [];
    await app.init();
    try {
      app.get(LockService).events$.subscribe((event) => {
        if (event.type === 'renewed' && event.key === 's15c-feed') renewals.push(event);
      });
      const leadership = app.get(LeadershipService);
      for (let i = 0; i < 20 && !leadership.isLeader('s15c-feed'); i++) await locks.manualClock.advance(0);
      expect(leadership.isLeader('s15c-feed')).toBe(true);
      for (let step = 0; step < 30; step++) await locks.manualClock.advance(100); // one ttl, 3000 ms
      expect(app.get(Feed).terms).toBe(1);
      // ttl/3 (1000 ms): at least 3 renewals in the term's first ttl. The module's 2900 ms: 1.
      expect(renewals.length).toBeGreaterThanOrEqual(3);
    } finally {
      await app.close();
    }
  });
});
