import { describe, expect, it } from 'vitest';
import type { Plan } from '../../explore/sim/plan.js';
import { runPlan } from '../../explore/sim/world.js';

const quiet = { mutexCallers: 0, lockedCallers: 0, semaphoreCallers: 0, longSemaphoreCallers: 0, rwCallers: 0, transferCallers: 0, greedyCallers: 0, jobs: false, leader: false };

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

  it('an @OnOneInstance tick that falls due during a pause does not start under the lease that ran out meanwhile', async () => {
    // Found by `npm run explore -- --seconds 40 --seed 5`: i1 was paused across its tick 11 and
    // its lease's deadline; on resume the tick's timer (due first) ran the job before the
    // deadline sweeper declared the lease lost.
    const plan: Plan = {
      ...quiet,
      seed: 0,
      instances: 2,
      ttl: 300,
      jobs: true,
      faults: [
        { kind: 'reply-delayed', at: 0, instance: 0, duration: 151, amount: 302 },
        { kind: 'pause', at: 2138, instance: 1, duration: 301, amount: 669 },
        { kind: 'clock-jump', at: 82, instance: 0, duration: 1682, amount: 414 },
        { kind: 'message-lost', at: 1664, instance: 1, duration: 143, amount: 13 },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  // Issue 23 item 1: a semaphore waiter behind the head refreshed while permits were free, its
  // grants reached itself, and it was queued again while holding (the next release would grant
  // it a second time). Found by exploring the revert of the fix
  // (`npm run explore:bugs -- --only semaphore-self-grant`); fields do not shrink away, as each
  // shifts the seeded random stream the shape depends on.
  it.each<[string, Plan]>([
    [
      'pauses of the instance holding both permits (seed 1, path 93:12:2)',
      {
        ...quiet,
        seed: 2102427910,
        instances: 3,
        ttl: 300,
        mutexCallers: 1,
        semaphoreCallers: 1,
        rwCallers: 1,
        transferCallers: 1,
        jobs: true,
        faults: [
          { kind: 'pause', at: 2842, instance: 1, duration: 2098, amount: 252 },
          { kind: 'pause', at: 897, instance: 1, duration: 856, amount: 1219, onHolder: true },
          { kind: 'reply-lost-after', at: 808, instance: 2, duration: 1407, amount: 1071 },
          { kind: 'store-restart', at: 1632, instance: 0, duration: 823, amount: 190 },
          { kind: 'message-duplicated', at: 2170, instance: 1, duration: 2250, amount: 2256 },
          { kind: 'pause', at: 1471, instance: 1, duration: 655, amount: 1641, onHolder: true },
          { kind: 'message-lost', at: 78, instance: 2, duration: 122, amount: 1842 },
          { kind: 'pause', at: 1965, instance: 2, duration: 2500, amount: 1774 },
        ],
      },
    ],
    [
      'replies of one instance delayed 2 s (seed 1, path 81:17, before long callers worked as briefly as the others)',
      {
        ...quiet,
        seed: 524706533,
        instances: 3,
        ttl: 600,
        mutexCallers: 1,
        semaphoreCallers: 1,
        longSemaphoreCallers: 1,
        jobs: true,
        leader: true,
        faults: [
          { kind: 'reply-delayed', at: 11, instance: 1, duration: 656, amount: 2012 },
          { kind: 'pause', at: 2172, instance: 0, duration: 1095, amount: 1115, onHolder: true },
        ],
      },
    ],
  ])('a semaphore waiter granted by its own refresh is not queued again: %s', async (_name, plan) => {
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  it("a waiting reader's leave that frees the lock wakes a barging writer (no workload, no fault: the wake-up probe alone)", async () => {
    // Found by review (a reader whose attempt let it in, its call given up with the attempt in
    // flight, left without the "lock freed" message); the probe's `wake-rw-leave` key replays
    // it, and the revert (`npm run explore:bugs -- --only reader-leave-wakes-nobody`) fails here.
    const plan: Plan = { ...quiet, seed: 1, instances: 3, ttl: 600, faults: [] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  // Found by the extend workload (`npm run explore -- --seed 1 --strict`), fixed since: two
  // `extend()` calls of one holder without waiting for the first, to 600 ms, then to 300 ms. The
  // second lease ended after the deadline the lock had when it was sent (its acquisition's, 19 ms
  // earlier), so `extend()` did not record it as a shortening; the first call's reply then set
  // the deadline 600 ms on, past the 300 ms lease Redis ran second, and the lock read as held
  // about 290 ms after the store's lease ended. Every extension not answered yet now caps the
  // replies of the renewals sent before it.
  it('no reply to an earlier extend() or renewal moves the deadline past a later, shorter lease (extend-short-unrecorded)', async () => {
    const plan: Plan = { ...quiet, seed: 175895208, instances: 2, ttl: 300, semaphoreCallers: 1, rwCallers: 1, extendCallers: 1, faults: [] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  // Found by the leader probe (`npm run explore -- --seed 881001 --strict`, shrunk to a plan
  // without callers or faults), fixed: `hand-release-as-close-begins`. The leader releases its
  // term by hand and its instance closes 0 ms later, the release still on its way: stop() took
  // the term and interrupted it (nothing, for a lock being released), and the release, once back,
  // found the term taken and did not end it either: its signal never aborted. The release now
  // ends the term once the election stopped too (985fc2d), and stop() ends a term whose release is
  // still on its way (d625910); either alone passes here, so seeded bug 41 reverts both (its spec:
  // test/leader/leader-lock-released-by-hand-as-close-begins.spec.ts).
  it('a term released by hand just as its instance closes still ends: its signal aborts (hand-release-as-close-begins)', async () => {
    const plan: Plan = { ...quiet, seed: 0, instances: 2, ttl: 300, leader: true, leaderHooks: { acquired: 'until-aborted', lost: 'returns', releases: [], closeAfterRelease: 0 }, faults: [] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  // The same moment with hooks that return at once: stop() tells the class (onLeadershipLost)
  // before the release comes back, so the term must end at stop() itself, not only when the
  // release returns (d625910's endTerm() in stop(); its revert, seeded bug 51,
  // `hand-release-unanswered-at-close`, fails here). This stop() fix alone also hid seeded bug 41
  // (the revert of 985fc2d), which therefore reverts both.
  it('a term released by hand just as its instance closes is ended by the close before onLeadershipLost runs (hand-release-unanswered-at-close)', async () => {
    const plan: Plan = { ...quiet, seed: 0, instances: 2, ttl: 300, leader: true, leaderHooks: { acquired: 'returns', lost: 'returns', releases: [], closeAfterRelease: 0 }, faults: [] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    expect(result.trace.some((line) => line.includes('closes 0 ms after its hand release'))).toBe(true);
  });

  // Found by `npm run explore -- --seed 1077643955 --path 162:21` once the simulator stopped
  // excusing it, fixed since: the store granted i2's waiting semaphore call a permit, then
  // restarted empty; i2, its attempt in flight after the restart, kept the grant's message, and
  // the attempt's busy reply showed a restarted fencing counter (3) below the grant's token (7),
  // which it took for a grant made after that attempt. Its code started on a permit the store no
  // longer had. A busy reply now says when it queued the caller anew (`joined`), and a waiter
  // whose place was lost confirms every grant with an attempt before it is handed out.
  it('a waiter whose place a store restart lost confirms a grant made before it instead of holding it (stale grant after data loss)', async () => {
    const plan: Plan = {
      seed: 749678652,
      instances: 4,
      ttl: 300,
      mutexCallers: 0,
      lockedCallers: 1,
      semaphoreCallers: 2,
      rwCallers: 2,
      transferCallers: 1,
      jobs: false,
      leader: true,
      longSemaphoreCallers: 2,
      greedyCallers: 1,
      extendCallers: 1,
      shortWaitCallers: 1,
      leaderHooks: { acquired: 'until-aborted', lost: 'hangs', releases: [849], closeAfterRelease: 5, ttl: 2000 },
      faults: [
        { kind: 'message-duplicated', at: 2964, instance: 1, duration: 1265, amount: 1564 },
        { kind: 'store-restart', at: 1430, instance: 3, duration: 1457, amount: 1786 },
        { kind: 'message-duplicated', at: 791, instance: 3, duration: 623, amount: 698 },
        { kind: 'shutdown', at: 793, instance: 3, duration: 1880, amount: 2192 },
        { kind: 'pause', at: 243, instance: 1, duration: 494, amount: 62 },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  // The clock-seeded fencing counter (e249151), caught once the checker stopped excusing tokens
  // that go back after a restart that lost the counters outright: with the revert
  // (`explore/bugs/50-fence-restarts-at-one.patch`), the store restarting empty 3 ms in hands
  // token 1 out a second time, to the next holder of the key.
  it('a fencing counter the store lost starts again above the tokens it handed out (fence-restarts-at-one)', async () => {
    const plan: Plan = { ...quiet, seed: 0, instances: 3, ttl: 300, greedyCallers: 1, extendCallers: 0, shortWaitCallers: 0, faults: [{ kind: 'store-restart', at: 3, instance: 0, duration: 1, amount: 0 }] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    expect(result.trace.some((line) => line.includes('store restarts empty'))).toBe(true);
  });

  // Not a defect of the library: the queue-order probe ran while one instance's connection still
  // held back replies a delayed window had put behind 2.2 s of delay, and its caller (rightly)
  // gave its turn up when its attempt's reply did not come. The probe now starts once every
  // held-back reply has come in. Found as the first shrunk schedule of seeded bug 50.
  it('the queue-order probe waits for the replies the faults held back (no false violation)', async () => {
    const plan: Plan = {
      ...quiet,
      seed: 0,
      instances: 3,
      ttl: 300,
      greedyCallers: 1,
      extendCallers: 0,
      shortWaitCallers: 0,
      leaderHooks: { acquired: 'returns', lost: 'hangs', releases: [], closeAfterRelease: 1 },
      faults: [
        { kind: 'reply-delayed', at: 0, instance: 0, duration: 931, amount: 436 },
        { kind: 'store-restart', at: 394, instance: 2, duration: 1930, amount: 1511 },
        { kind: 'reply-delayed', at: 2397, instance: 2, duration: 2499, amount: 2205 },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
  });

  // Seeded bug 53, step-down-keeps-released-term (the revert of 74c7179), found by
  // `npm run explore:bugs -- --only step-down-keeps-released-term` in 2 schedules once the
  // simulator's onLeadershipAcquired could throw (`LeaderHooks.throws`), shrunk to this (replay
  // with the patch applied: `npm run explore -- --seed 1 --path 1:2:0:0:0:1:1:1:2`): i0's first
  // term's hook calls lock.release() without awaiting it, then throws before the store answers.
  // stepDown()'s interrupt('stepped-down') leaves a lock being released alone, so the term must be
  // ended there (endTerm()): else onLeadershipLost runs with its signal not aborted, and the release,
  // once back, finds the term taken and ends nothing (its spec:
  // test/leader/leader-hand-release-then-hook-throws-ends-term.spec.ts).
  it('a leader whose onLeadershipAcquired released its term by hand and then threw steps down: its signal aborts before onLeadershipLost runs (step-down-keeps-released-term)', async () => {
    const plan: Plan = { ...quiet, seed: 0, instances: 4, ttl: 300, extendCallers: 0, shortWaitCallers: 0, leader: true, leaderHooks: { acquired: 'returns', lost: 'returns', releases: [], throws: 'after-hand-release' }, faults: [] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    expect(result.trace.some((line) => line.includes('onLeadershipAcquired of term #1 throws (after-hand-release)'))).toBe(true);
  });

  // runAsLeader() work (`LeaderHooks.work`) at a step-down, no faults: i0's onLeadershipAcquired
  // throws after a step while a work of its term runs a using() call of its own (`lw`). The step-down
  // tells that call (its signal aborts in the step-down's turn) and runs onLeadershipLost only once
  // the work ended (969eb60). Shrunk from `npm run explore -- --seed 1` with the step-down's
  // interruptCallsWithin() taken out (inner call not told at 497 ms); seeded bug
  // `step-down-leaves-run-as-leader-work` reverts the whole fix.
  it('a step-down tells the using() call inside the term\'s runAsLeader() work, and onLeadershipLost follows the work', async () => {
    const plan: Plan = { ...quiet, seed: 0, instances: 4, ttl: 300, extendCallers: 0, shortWaitCallers: 0, leader: true, leaderHooks: { acquired: 'returns', lost: 'returns', releases: [], throws: 'after-step', work: true }, faults: [] };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    expect(result.trace.some((line) => line.includes('throws (after-step)'))).toBe(true);
    expect(result.trace.some((line) => line.includes('mutex lw starts'))).toBe(true);
  });

  // Not defects of the library, false violations of the first cut of the runAsLeader() work: a
  // step-down waits for the term's work before onLeadershipLost (a ttl for the lease, unbounded for
  // the hook), so (1) i0's term #3 stepped down at 762 ms, its lease ran out at 790 ms (renewals'
  // replies delayed) and i2 began term #4 at 816 ms while i0's work still ran, not told yet; and (2)
  // i1's step-down gave the lease back two ttls after the throw (a ttl for the work and onLeadershipLost,
  // a ttl more for the work of every term), not one.
  it('a step-down whose runAsLeader() work outlives the lease, or a ttl, is judged from the work\'s end', async () => {
    const first: Plan = {
      ...quiet,
      seed: 0,
      instances: 4,
      ttl: 300,
      greedyCallers: 2,
      extendCallers: 0,
      shortWaitCallers: 0,
      leader: true,
      leaderHooks: { acquired: 'returns', lost: 'returns', releases: [300, 2996], closeAfterRelease: 377, throws: 'after-step', lostThrows: true, work: true },
      faults: [{ kind: 'reply-delayed', at: 0, instance: 0, duration: 838, amount: 122 }],
    };
    const second: Plan = { ...quiet, seed: 0, instances: 2, ttl: 300, extendCallers: 0, shortWaitCallers: 0, leader: true, leaderHooks: { acquired: 'returns', lost: 'returns', releases: [], ttl: 2000, throws: 'after-step', work: true }, faults: [{ kind: 'store-restart', at: 0, instance: 0, duration: 1, amount: 0 }] };
    for (const plan of [first, second]) {
      const result = await runPlan(plan, false);
      expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    }
  });

  // Not a defect of the library: the store restarted from an older snapshot 3 ms in (the leader
  // key's counter back to 1) while i0's acquisition of the leadership, run just before, was on
  // its way back; i0's term #2 began after the restart had cleared the checker's terms, and a
  // later leader was handed #2 again, as a rollback of the counters does (documented). The
  // check "at most one leader per term" now excuses a term whose lease was acquired before a
  // rollback. Found by `npm run explore -- --seconds 600 --seed 20261205` (path 156:12:1:18).
  it('a term whose lease was acquired before the store rolled back may repeat (no false violation)', async () => {
    const plan: Plan = {
      ...quiet,
      seed: 1960544452,
      instances: 2,
      ttl: 300,
      mutexCallers: 1,
      semaphoreCallers: 1,
      leader: true,
      longSemaphoreCallers: 2,
      greedyCallers: 2,
      extendCallers: 0,
      shortWaitCallers: 2,
      leaderHooks: { acquired: 'until-aborted', lost: 'slow', releases: [], closeAfterRelease: 169, ttl: 2000, throws: 'rejects' },
      faults: [
        { kind: 'reply-lost-before', at: 976, instance: 0, duration: 1393, amount: 2491 },
        { kind: 'reply-delayed', at: 2236, instance: 1, duration: 1783, amount: 1 },
        { kind: 'store-restart', at: 3, instance: 1, duration: 10, amount: 11 },
        { kind: 'reply-lost-before', at: 506, instance: 0, duration: 2497, amount: 876 },
        { kind: 'crash', at: 1422, instance: 1, duration: 2374, amount: 516 },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    expect(result.trace.some((line) => line.includes('store restarts from an older snapshot'))).toBe(true);
    expect(result.trace.filter((line) => / leads, term #2$/.test(line)).length).toBe(2);
  });

  // Not a defect of the library: a multi-key lock keeps the keys it took while it waits for the
  // next one (docs/lock-family.md), and an acquire attempt whose reply never comes is waited for up
  // to the call's waitTimeout (60 s here, past the run). The store froze at 1217 ms with its
  // replies never delivered: i2 held acct-a (#149), its attempt on acct-b was never answered, and
  // i1's transfer called at 2144 ms waited for acct-a behind it (i2 gives it back at 60.8 s, when
  // its waitTimeout runs out). The liveness rule excused the calls of the instance whose command
  // was never answered, not those of other instances waiting for what it holds; it now excuses
  // the transfers held up, down the chain, by such a transfer (`heldUpTransfers`). Found by
  // `npm run explore -- --seed 35035` (path 102).
  it('a transfer waiting for a key that a transfer held up by a reply that never comes keeps is excused (no false violation)', async () => {
    const plan: Plan = {
      ...quiet,
      seed: 27,
      instances: 3,
      ttl: 300,
      lockedCallers: 1,
      semaphoreCallers: 1,
      rwCallers: 2,
      transferCallers: 1,
      leader: true,
      longSemaphoreCallers: 0,
      greedyCallers: 0,
      extendCallers: 0,
      shortWaitCallers: 1,
      leaderHooks: { acquired: 'hangs', lost: 'returns', releases: [2986, 1149], throws: 'rejects', work: true },
      faults: [
        { kind: 'pause', at: 208, instance: 0, duration: 1165, amount: 689, onHolder: true },
        { kind: 'message-duplicated', at: 2509, instance: 1, duration: 2083, amount: 2115 },
        { kind: 'reply-lost-before', at: 2634, instance: 0, duration: 1521, amount: 2217 },
        { kind: 'reply-lost-before', at: 1217, instance: 0, duration: 27, amount: 2086 },
        { kind: 'reply-lost-after', at: 599, instance: 0, duration: 1333, amount: 860 },
        { kind: 'message-duplicated', at: 2907, instance: 2, duration: 1770, amount: 1581 },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    // The shape: i2 took acct-a, its next attempt was never answered, and it kept acct-a until
    // the close at the end of the run ended both waits.
    expect(result.trace.some((line) => /ms {2}i2 +acquired acct-a #149$/.test(line))).toBe(true);
    expect(result.trace.some((line) => /ms {2}i2 +acquire tok\d+: its reply never comes/.test(line))).toBe(true);
    expect(result.trace.some((line) => /ms {2}i1 +transfer failed: LockNotAcquiredError: Lock "acct-a" was not acquired: LockService shut down/.test(line))).toBe(true);
    expect(result.trace.some((line) => /ms {2}i2 +transfer failed: LockNotAcquiredError: Lock "acct-b" was not acquired: LockService shut down/.test(line))).toBe(true);
  });

  // Found by `npm run explore -- --seconds 900 --seed 46000` (schedule 87) on the explorer's own
  // rule: i1's waiter refresh, held up 1,100 ms on its way by the grant-handover probe, kept its
  // later commands behind it (one connection keeps their order), the reply of a renewal that had
  // run too, so the job's owner lock was told lost to its deadline while its give-back waited in
  // line behind the held-up refresh. The rule now excuses a give-back that cannot have reached
  // the store yet (`queuedBehind`), as it excused the job-claim probe's held-up acquire.
  it('a give-back queued behind a probe\'s held-up command is excused (no false violation)', async () => {
    const plan: Plan = {
      ...quiet,
      seed: 1112447466,
      instances: 4,
      ttl: 1500,
      semaphoreCallers: 1,
      jobs: true,
      greedyCallers: 2,
      extendCallers: 0,
      shortWaitCallers: 0,
      leaderHooks: { acquired: 'hangs', lost: 'returns', releases: [1562, 976], lostThrows: true },
      faults: [
        { kind: 'pause', at: 228, instance: 0, duration: 7, amount: 2163, onHolder: true },
        { kind: 'message-lost', at: 2994, instance: 2, duration: 978, amount: 2493 },
        { kind: 'store-restart', at: 1281, instance: 0, duration: 1650, amount: 1425 },
        { kind: 'pause', at: 2925, instance: 0, duration: 1919, amount: 877, onHolder: true },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    // The shape: the owner lock told lost while a refresh of the same instance was held up.
    expect(result.trace.some((line) => /i1 +acquire steered by a probe: \{"delay":0,"delayBefore":1100\}$/.test(line))).toBe(true);
    expect(result.trace.some((line) => /i1 +lost tick-job:owner #195 \(expired\)$/.test(line))).toBe(true);
  });

  // Found by `npm run explore -- --seed 1` (schedule 228, `--path 227`) once the seeded-bug probes
  // of the forty-sixth session ran: i1's term stepped down at 279 ms (its onLeadershipAcquired
  // threw after its step), its runAsLeader() work winding down 1,661 ms; the close began at 465
  // ms and ended at its 1 s bound with onLeadershipLost never called: a stepped-down term's
  // onLeadershipLost waits for its work, and stop() told only the term it held (none).
  it('a term stepped down before the close, its work still running at the close\'s bound, is told onLeadershipLost by then', async () => {
    const plan: Plan = {
      ...quiet,
      seed: 11,
      instances: 2,
      ttl: 600,
      lockedCallers: 1,
      transferCallers: 1,
      jobs: true,
      leader: true,
      longSemaphoreCallers: 1,
      greedyCallers: 2,
      extendCallers: 2,
      shortWaitCallers: 0,
      leaderHooks: { acquired: 'extends', lost: 'returns', releases: [], ttl: 2000, throws: 'after-step', work: true },
      faults: [
        { kind: 'clock-jump', at: 892, instance: 1, duration: 1760, amount: 319 },
        { kind: 'pause', at: 662, instance: 0, duration: 1515, amount: 36 },
        { kind: 'store-restart', at: 1170, instance: 0, duration: 257, amount: 727 },
        { kind: 'message-duplicated', at: 1217, instance: 1, duration: 2130, amount: 1102 },
        { kind: 'shutdown', at: 465, instance: 1, duration: 1809, amount: 108 },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    // The shape: the term's work still winding down as the runners stopped at their bound.
    expect(result.trace.some((line) => /i1 +runAsLeader\(\) work of term #1 winds down 1661 ms$/.test(line))).toBe(true);
    expect(result.trace.some((line) => /i1 +runners stopped in 1000 ms$/.test(line))).toBe(true);
  });
  // Found by `npm run explore -- --seconds 900 --seed 48000` (schedule 184) once b2fa79b3 had
  // made a hook that threw past its lease lose the term: i0 was paused 1,282 ms while its term
  // #9's onLeadershipAcquired slept through its lease, and threw at the resume, before the deadline
  // sweeper's timer ran. The runner asks the lease first and reports the term lost ('expired'),
  // which is right (another instance led by then); the invariant still asked for 'stepped-down'
  // (a false alarm: the world judges a throw past the lease's deadline as a loss now).
  it('a leader whose onLeadershipAcquired threw after sleeping through a pause past its lease loses the term (expired), not steps down', async () => {
    const plan: Plan = {
      ...quiet,
      seed: 116275557,
      instances: 4,
      ttl: 600,
      mutexCallers: 1,
      rwCallers: 2,
      jobs: true,
      leader: true,
      greedyCallers: 1,
      extendCallers: 1,
      shortWaitCallers: 1,
      leaderHooks: { acquired: 'returns', lost: 'returns', releases: [], closeAfterRelease: 397, throws: 'after-step', lostThrows: true },
      faults: [
        { kind: 'crash', at: 1455, instance: 1, duration: 1752, amount: 1454 },
        { kind: 'message-lost', at: 2744, instance: 2, duration: 2197, amount: 1904 },
        { kind: 'pause', at: 1389, instance: 0, onHolder: true, duration: 1282, amount: 2327 },
      ],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    // The shape: at the resume the hook threw and the term ended as a loss. (Which of the two
    // comes first depends on how the code is compiled: the explorer's tsc build had the throw
    // first, as found; vitest's transform has the deadline sweeper's timer first.)
    expect(result.trace.some((line) => /^ +2671\.0 ms +i0 +onLeadershipAcquired of term #9 throws \(after-step\)/.test(line))).toBe(true);
    expect(result.trace.some((line) => /^ +2671\.0 ms +i0 +term #9 ends: its signal aborts \(expired\)$/.test(line))).toBe(true);
  });

  // Found by `npm run explore -- --seconds 900 --seed 7158` (schedule 286, `--path 285:3:0:0:0:5`):
  // the whole store froze at 8 ms for good, so the workload's callers waited their 60 s
  // waitTimeout; in the grant-handover probe's `gx` i1's waiter gave the grant back at 58,978 ms,
  // and at 60,056 ms i1's `using(m)` ran out of time and left the queue, again once its frozen
  // attempt settles (a leave the close waits for, bounded by its shutdownTimeout). The probe
  // counted every clean-up begun on i1 since the abort, that leave of another key included, as the
  // give-back still pending (a false alarm: the give-back's release had settled at its bound).
  it('the gx probe judges the give-back of its grant, not a clean-up of another key begun after it', async () => {
    const plan: Plan = {
      ...quiet,
      seed: 1,
      instances: 4,
      ttl: 600,
      mutexCallers: 1,
      transferCallers: 1,
      extendCallers: 1,
      shortWaitCallers: 2,
      leaderHooks: { acquired: 'returns', lost: 'hangs', releases: [845, 1536], closeAfterRelease: 229, lostThrows: true, work: true },
      faults: [{ kind: 'reply-lost-before', at: 8, instance: 1, duration: 1928, amount: 2143 }],
    };
    const result = await runPlan(plan, false);
    expect(result.violation, result.trace.slice(-30).join('\n')).toBeUndefined();
    // The shape: i1's leave of `m` begun after the give-back, its frozen attempt never answered.
    expect(result.trace.some((line) => /^ +58978\.0 ms +i1 +grant-handover probe: the waiter's signal aborts during its renewal before the handover$/.test(line))).toBe(true);
    expect(result.trace.some((line) => /^ +60056\.0 ms +i1 +using\(m\) failed: LockNotAcquiredError/.test(line))).toBe(true);
  });
});
