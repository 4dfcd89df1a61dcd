import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The spec files that took 25 s or more in a CI run (the forty-seventh session's, loaded), longest
 * first. vitest orders files it has no timings for (a fresh clone, as CI's) by size, largest
 * first; the behaviour suites, small files that run a shared suite for minutes, then started
 * last and ran alone at the end of the run. A file missing here is only ordered by size.
 */
const LONG_FIRST: readonly string[] = [
  'test/explore/simulator.spec.ts',
  'test/explore/real-redis.spec.ts',
  'test/schedule-processes.spec.ts',
  'test/chaos/exclusion.spec.ts',
  'test/behaviour/node-redis-cluster.spec.ts',
  'test/demo.spec.ts',
  'test/behaviour/node-redis.spec.ts',
  'test/family/multi-key-processes.spec.ts',
  'test/behaviour/ioredis-family-cluster.spec.ts',
  'test/scale/cluster-hardening.spec.ts',
  'test/explore/regressions.spec.ts',
  'test/ops/board.spec.ts',
  'test/chaos/leaks.spec.ts',
  'test/sample-app/deposit-past-2-53-written-inexact.spec.ts',
  'test/node-redis-loading.spec.ts',
  'test/scale/schedule-cluster.spec.ts',
  'test/sample-app/stalled-deposit-refusal-names-account.spec.ts',
  'test/behaviour/memory.spec.ts',
  'test/family/chaos-family.spec.ts',
  'test/behaviour/ioredis-family.spec.ts',
  'test/fencing-chaos.spec.ts',
  'test/behaviour/cluster.spec.ts',
  'test/ops/terminus.spec.ts',
  'test/lifecycle/close-with-node-redis-subscriber-reconnecting-exits.spec.ts',
  'test/topologies/node-redis-cluster-channel-given-up-in-failover-stays-subscribed.spec.ts',
  'test/quorum/release-missed-during-busy-silence-evicted-never-sent.spec.ts',
  'test/fencing-redis.spec.ts',
  'test/scale/quorum.spec.ts',
  'test/family/crash-leftovers.spec.ts',
  'test/behaviour/redis.spec.ts',
  'test/lifecycle/glide-close-while-subscribed-logs-core-error.spec.ts',
  'test/lifecycle/close-with-node-redis-cluster-or-sentinel-subscriber-reconnecting-exits.spec.ts',
  'test/ops/cluster-board-walk-across-master-restart.spec.ts',
  'test/behaviour/glide-cluster.spec.ts',
  'test/valkey-clients.spec.ts',
  'test/lifecycle/close-with-redis-down-or-frozen-exits.spec.ts',
  'test/behaviour/glide.spec.ts',
  'test/scheduling.spec.ts',
  'test/jobs-leaders.spec.ts',
  'test/topologies/sentinel-failover-wait-for-replicas.spec.ts',
  'test/behaviour/node-redis-quorum.spec.ts',
  'test/lifecycle/close-with-cluster-slot-refresh-under-way-exits.spec.ts',
  'test/family/rwlock-processes.spec.ts',
  'test/ops/health-sentinel-frozen-master-not-named.spec.ts',
];

/**
 * vitest's order (the projects one after the other; within one, files that failed and then the
 * longest by its cache, else the largest), with the files of LONG_FIRST moved to the front of
 * their project, so that the workers start them first and the run does not end on one of them.
 */
export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const index = LONG_FIRST.indexOf(relative(this.ctx.config.root, spec.moduleId).replaceAll('\\', '/'));
      return index === -1 ? LONG_FIRST.length : index;
    };
    const byProject = new Map<string, TestSpecification[]>();
    for (const spec of sorted) {
      const group = byProject.get(spec.project.name) ?? [];
      group.push(spec);
      byProject.set(spec.project.name, group);
    }
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return [...byProject.values()].flatMap((group) => group.sort((a, b) => rank(a) - rank(b)));
  }
}
