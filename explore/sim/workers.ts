import { Locked } from '../../lib/decorators/locked.decorator.js';
import { OnOneInstance } from '../../lib/decorators/on-one-instance.decorator.js';
import { WithoutOverlapping } from '../../lib/decorators/without-overlapping.decorator.js';
import { ReentrantLock } from '../../lib/core/engine/reentrant-lock.js';
import type { LockService } from '../../lib/lock.service.js';
import { LOCK_SERVICE_PROPERTY } from '../../lib/redis-lock.constants.js';
import type { JobLockOrchestrator } from '../../lib/scheduling/job-lock.orchestrator.js';
import { JOB_ORCHESTRATOR_PROPERTY } from '../../lib/scheduling/scheduling.constants.js';
import type { CallRecord, Instance, World } from './world.js';

const CALLER_WAIT_MS = 60_000;

/** A provider with a `@Locked` method, as Nest would build it (the service in its injected property). */
export class SimLocked {
  constructor(
    service: LockService,
    private readonly world: World,
    private readonly instance: Instance,
  ) {
    (this as unknown as Record<symbol, unknown>)[LOCK_SERVICE_PROPERTY] = service;
  }

  @Locked('m', { waitTimeout: CALLER_WAIT_MS })
  async write(steps: number[], reenter: boolean, call?: CallRecord): Promise<void> {
    const lock = this.instance.service.current('m')!;
    await this.world.section(this.instance, 'mutex', 'm', lock, steps, reenter, 1, call);
  }
}

/** Job methods as `@nestjs/schedule` would call them: a tick every interval, whether or not the last one ended. */
export class SimJobs {
  constructor(
    orchestrator: JobLockOrchestrator,
    private readonly world: World,
    private readonly instance: Instance,
  ) {
    (this as unknown as Record<symbol, unknown>)[JOB_ORCHESTRATOR_PROPERTY] = orchestrator;
  }

  @OnOneInstance({ key: 'tick-job' })
  async tick(k: number, late: boolean): Promise<void> {
    // The run's view of the owner lease (it ends with the run); the checks need the lease itself.
    const view = this.instance.service.current('tick-job:owner');
    const lease = view instanceof ReentrantLock ? view.outer : view;
    this.world.tickRan(this.instance, k, late, lease);
    if (lease !== undefined) await this.world.section(this.instance, 'job', 'tick-job:owner', lease, [20 + (k % 3) * 30], false);
  }

  @WithoutOverlapping({ key: 'exclusive-job' })
  async exclusive(work: number): Promise<void> {
    const run = this.instance.service.current('exclusive-job')!;
    await this.world.section(this.instance, 'mutex', 'exclusive-job', run, [work], false);
  }
}
