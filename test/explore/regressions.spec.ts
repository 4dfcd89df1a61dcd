import { describe, expect, it } from 'vitest';
import type { Plan } from '../../explore/sim/plan.js';
import { runPlan } from '../../explore/sim/world.js';

const quiet = { mutexCallers: 0, lockedCallers: 0, semaphoreCallers: 0, rwCallers: 0, transferCallers: 0, jobs: false, leader: false };

/** Shrunk schedules of defects the explorer found in the code of the day, kept as they replay. */
describe('explorer regressions (deterministic simulation, fixed schedules)', () => {
  it('an acquire whose reply comes after the lease ran out locally is not handed to the caller (@WithoutOverlapping)', async () => {
    // Found by `npm run explore -- --seed 2`: the reply of i0's tryAcquire was delayed 300 ms
    // past a 300 ms lease; the job started under a lock the store had already let go.
    const plan: Plan = { ...quiet, seed: 0, instances: 3, ttl: 300, jobs: true, faults: [{ kind: 'reply-delayed', at: 0, instance: 0, duration: 151, amount: 300 }] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  it('a write lock whose acquire reply comes late is not handed out beside readers', async () => {
    // Found by `npm run explore -- --seed 1`.
    const plan: Plan = { ...quiet, seed: 0, instances: 4, ttl: 300, rwCallers: 1, faults: [{ kind: 'reply-delayed', at: 0, instance: 2, duration: 373, amount: 326 }] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });
});
