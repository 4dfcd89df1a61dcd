/**
 * Review suspicion (jobs and leaders follow-up): a job method (`@OnOneInstance()`,
 * `@WithoutOverlapping()`) called from its provider's constructor failed with "the instance must be
 * created by Nest, in a module that imports RedisLockModule": the instance was made by Nest, in
 * such a module, and the remedy sent the user looking at their imports. Nest gives the job its lock
 * service after the constructor returns; @Locked's error says so. The same for `LeadershipService`
 * asked from a constructor (a provider injected with it, deciding what to start): it said no
 * `@LeaderElection()` with the key ran in the application, which one did.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, OnOneInstance, WithoutOverlapping } from '../../lib/index.js';
import { startJobApp } from './support.js';

describe('a job or leadership call from a provider constructor', () => {
  it('a job method called from its constructor is told that, not to import RedisLockModule', async () => {
    let thrown: unknown;
    @Injectable()
    class Reports {
      constructor() {
        this.nightly().catch((error: unknown) => (thrown = error));
      }

      @OnOneInstance({ ttl: '10s' })
      @WithoutOverlapping()
      async nightly(): Promise<void> {}
    }
    await startJobApp([Reports]);
    await expect.poll(() => thrown).toBeDefined();
    const message = (thrown as Error).message;
    expect(message).toContain('Reports.nightly');
    // Failed: '... has no lock service: the instance must be created by Nest, in a module that imports RedisLockModule ...'
    expect(message).toMatch(/called from its constructor/);
  });

  it('LeadershipService asked from a constructor says the elections are not started yet, not that none has the key', async () => {
    @Injectable()
    @LeaderElection('reports-leader')
    class ReportsLeader {}

    let thrown: unknown;
    @Injectable()
    class Reports {
      constructor(leadership: LeadershipService) {
        try {
          leadership.isLeader('reports-leader');
        } catch (error) {
          thrown = error;
        }
      }
    }
    await startJobApp([ReportsLeader, Reports]);
    const message = (thrown as Error).message;
    // Failed: 'isLeader("reports-leader"): no @LeaderElection() with this key in this application. ...'
    expect(message).not.toMatch(/no @LeaderElection\(\) with this key/);
    expect(message).toMatch(/isLeader\("reports-leader"\).*before.*constructor/);
  });
});
