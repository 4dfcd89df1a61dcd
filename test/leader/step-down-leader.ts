import { Injectable } from '@nestjs/common';
import { LeaderElection, type Duration } from '../../lib/index.js';

/**
 * A leader of `key` (`ttl`, 4 s unless given) whose `onLeadershipAcquired` throws once `fail()` is called, so that
 * it steps down while it leads; `onLost` hears its `onLeadershipLost`.
 */
export function leaderThatStepsDown(key: string, onLost?: () => void, ttl: Duration = '4s'): { Leader: new () => object; fail: () => void } {
  let fail!: () => void;
  const failing = new Promise<void>((resolve) => (fail = resolve));
  @Injectable()
  @LeaderElection(key, { ttl })
  class StepDownLeader {
    async onLeadershipAcquired(): Promise<void> {
      await failing;
      throw new Error('feed down');
    }
    onLeadershipLost(): void {
      onLost?.();
    }
  }
  return { Leader: StepDownLeader, fail };
}
