import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { explore, formatReport } from '../../explore/explorer.js';
import type { Plan } from '../../explore/sim/plan.js';
import { runPlan } from '../../explore/sim/world.js';
// @ts-expect-error: an ES module of plain JavaScript, without declarations.
import { catalogue } from '../../explore/bugs.mjs';

/** A busy schedule: every workload, and one fault of each kind. */
const busy: Plan = {
  seed: 11,
  instances: 3,
  ttl: 600,
  mutexCallers: 2,
  lockedCallers: 1,
  semaphoreCallers: 2,
  longSemaphoreCallers: 1,
  rwCallers: 2,
  transferCallers: 1,
  greedyCallers: 1,
  extendCallers: 1,
  shortWaitCallers: 1,
  jobs: true,
  leader: true,
  faults: [
    { kind: 'reply-delayed', at: 100, instance: 1, duration: 400, amount: 300 },
    { kind: 'reply-lost-after', at: 300, instance: 2, duration: 200, amount: 0 },
    { kind: 'reply-lost-before', at: 900, instance: 0, duration: 150, amount: 0 },
    // Frozen (amount 517: see frozenOf): i1's replies come 1,920 ms late.
    { kind: 'reply-lost-after', at: 1_000, instance: 1, duration: 150, amount: 517 },
    { kind: 'message-lost', at: 500, instance: 0, duration: 600, amount: 0 },
    { kind: 'message-duplicated', at: 700, instance: 1, duration: 600, amount: 0 },
    { kind: 'pause', at: 1_200, instance: 1, duration: 900, amount: 0 },
    { kind: 'clock-jump', at: 1_500, instance: 0, duration: 1, amount: 40 },
    { kind: 'store-restart', at: 2_200, instance: 0, duration: 1, amount: 0 },
    { kind: 'shutdown', at: 2_500, instance: 2, duration: 1, amount: 0 },
    { kind: 'crash', at: 2_600, instance: 0, duration: 1, amount: 0 },
  ],
};

describe('deterministic simulation of the engine (explore/)', () => {
  it('replays a seed exactly: the same plan gives the same trace, event for event', async () => {
    const first = await runPlan(structuredClone(busy));
    const second = await runPlan(structuredClone(busy));
    expect(first.steps).toBeGreaterThan(1_000);
    expect(second.trace).toEqual(first.trace);
    // Every kind of fault took effect.
    for (const [kind, count] of Object.entries(first.faults)) expect(count, kind).toBeGreaterThan(0);
    expect(first.violation, first.trace.slice(-40).join('\n')).toBeUndefined();
  }, 60_000);

  // 24 schedules (40 until the thirty-third session, cut for CI's 20 minutes): a fixed set, the
  // same every run; `npm run explore` draws new ones.
  it('finds no violation in a fixed budget of generated schedules', async () => {
    const report = await explore({ seeds: 24, seed: 20261201, shrinkSeconds: 20 });
    expect(report.failure, formatReport(report)).toBeUndefined();
    expect(report.schedules).toBe(24);
  }, 180_000);

  it('bites: forty-three seeded bugs, from the store, the engine (its wake-ups, grants, parking, extend() and multi-key calls too), the primitives and the runners, are each found', () => {
    // Those found within a few schedules, one or two of each part; `npm run explore:bugs` runs
    // the whole catalogue. Sixteen until the thirty-sixth session: with the other six
    // (acquire-counted-from-reply, grant-reuses-fencing-token, refused-renewal-ignored,
    // parked-lock-freed-while-held, last-reader-wakes-nobody, reader-leave-wakes-nobody) this
    // case was the suite's costliest, about 120 s of CPU, most of it each bug's build and
    // processes starting, and the whole run stood within a minute of CI's 20.
    // Each is replayed from the schedule that found it (explore/bugs/ci-known-schedules.json, one
    // schedule, deterministic) instead of searched for from seed 1 every run (66 to 84 s of this
    // file's 78 to 102, two of them 8 to 27 s of search each); a known schedule that no longer
    // breaks its invariant (the draws or the engine moved) falls back to the search of before,
    // with the same budget, and fails the test, named (the search's find, if any, printed: refresh
    // it with that replay); it passed silently before, the bug found again by the search. The
    // tree is built once, each bug's patched files alone compiled again (`--transpile-patched`):
    // a build per bug was most of what was left (6.5 s of each bug's 10 on a loaded machine).
    const known = JSON.parse(readFileSync('explore/bugs/ci-known-schedules.json', 'utf8')) as Record<string, { seed: number; path: string; invariant: string }>;
    const only = [
      'release-without-owner-check',
      'renew-without-owner-check',
      'stale-grant-after-busy',
      'semaphore-off-by-one',
      'reader-beside-writer',
      'leadership-loss-not-told',
      'give-up-keeps-wake-up',
      'fifo-waiter-eats-freed-wake',
      'extend-after-stall-resolves',
      // Found by the earlier-term probe of the leader plans, after 1 to 18 schedules from seeds 1 to 5.
      'lease-given-back-under-earlier-term-work',
      // Found by the park probe of the greedy plans (thirty-ninth session), after 3 schedules from seed 1.
      'fifo-caller-busy-behind-parking-release',
      // Found by the lock a close with a refused give-back holds by acquire(), and by the data-loss
      // probe (forty-first session), after 40 and 35 schedules from seed 1: unfound for two
      // sessions before, their shapes gone from the runs unseen.
      'shutdown-release-not-resent',
      'stale-grant-after-data-loss',
      // Found by the tick-stall, foreign-data and multi-key give-back probes (forty-second
      // session), each by the first schedule from seed 1.
      'stalled-tick-claim-counted-from-call',
      'foreign-data-retried-to-wait-timeout',
      'multi-key-give-back-unbounded',
      // Found by the grant-handover probe (forty-fifth session), each by the first schedule from
      // seed 1; a replay of each known one took 1.0 to 2.7 s (the machine loaded).
      'aborted-waiter-handed-grant-after-release-reply',
      'unanswered-release-holds-later-grants',
      'late-grant-given-back-loses-place',
      'late-grant-unanswered-renewal-loses-place',
      'aborted-renewal-before-handover-release-never-settled',
      // Found by the failed-extend probe (forty-fifth session), by the first schedule from seed 1.
      'failed-extend-ttl-kept',
      'overlapping-failed-extends-keep-first-ttl',
      // Found by the grant-handover probe's `gw`, by the first schedule from seed 1, and by the
      // expired-keys rule, after 3 (forty-sixth session); 3.3 to 4.0 s each (the machine loaded).
      'watchdog-tick-loses-grant-before-handover',
      'renewal-answered-after-grant-forgotten-read-as-refused',
      'memory-store-keeps-expired-keys',
      // Found by the refused-for-good probe (an ACL changed under the application: NOPERM) and the
      // lapsed-entry probe with the store's semaphore-release rule (forty-seventh session), each by
      // the first schedule from seed 1.
      'acquire-refused-for-good-retried-to-wait-timeout',
      'refused-release-said-not-answered',
      'watchdog-renewal-refused-for-good-renewed-until-lease-ends',
      'first-renewal-refused-for-good-retried-until-grant-lease-ends',
      'memory-semaphore-release-without-entry-grants-waiters',
      // Found by the nested-using, closed-client, hand-on and metrics-pairing probes
      // (forty-seventh session), each by the first schedule from seed 1.
      'nested-using-overtaken-by-outer-release-runs-unlocked',
      'renewal-through-owner-closed-client-told-at-lease-end',
      'semaphore-call-taking-no-permits-hands-freed-permits-to-nobody',
      'metrics-wait-begun-before-recording-takes-later-count',
      // Found by the renewal hand-on, multi-key refusal and close-after-stall probes (forty-eighth
      // session), each by the first schedule from seed 1; a replay of each known one took 3.8 to
      // 5.2 s at a load average of about 8.
      'renewal-permit-gone-hands-freed-permits-to-nobody',
      'multi-key-part-refused-for-good-waited-on',
      'close-after-stall-past-lease-tells-shutdown',
      // Found by the multi-key step-down, leader close-after-stall and multi-key close-metrics
      // probes, each by the first schedule from seed 1, and by the manual-clock probe's timers
      // check, by the ninth (forty-eighth session, later part); a replay of each known one took
      // 2.6 to 4.5 s at a load average of about 10.
      'multi-key-part-lost-after-step-down-keeps-other-keys',
      'close-after-stall-past-lease-tells-leader-shutdown',
      'manual-clock-timers-left-after-last-release',
      'multi-key-call-running-at-close-counted-lost',
      // Found by the reply-during-stall probe (forty-ninth session's 126d9490: a stall that ends
      // as Node's event loop does, its timers before its input), by the first schedule from seed 1.
      'reply-during-stall-counted-missing',
    ];
    // The thirty-one took 246 s at a load average of 16 to 21 (68 s for twenty-six at 6 to 8): the
    // bound, 240 s until the forty-seventh session, leaves room for a loaded runner. The thirty-four
    // before the metrics-pairing probe's took 475 s at 27 to 38 (each replay 10 to 27 s then, the
    // three added as the others), and the case 323 s at 30 to 37 in the next run; its bug's replay
    // took 20.3 s at about 30.
    expect(only.filter((name) => known[name] === undefined)).toEqual([]);
    // A known schedule no test replays would go stale unseen.
    expect(Object.keys(known).filter((name) => !only.includes(name))).toEqual([]);
    // Two at a time: each bug's build and process starts are most of its time, and they overlap.
    const run = spawnSync(process.execPath, ['explore/bugs.mjs', '--only', only.join(','), '--known', 'explore/bugs/ci-known-schedules.json', '--transpile-patched', '--seeds', '60', '--shrink-seconds', '0.5', '--jobs', '2'], { encoding: 'utf8' });
    const stale = run.stderr.split('\n').filter((line) => line.startsWith('STALE'));
    if (stale.length > 0) process.stdout.write(`known schedules to refresh in explore/bugs/ci-known-schedules.json:\n${stale.join('\n')}\n${run.stdout}`);
    expect(run.stdout, run.stderr).toContain(`bugs found: ${only.length} of ${only.length}`);
    expect(run.status).toBe(0);
    expect(stale, `known schedules that no longer break their invariant (refresh them in explore/bugs/ci-known-schedules.json):\n${run.stdout}`).toEqual([]);
  }, 360_000);

  it('keeps every catalogued bug applicable to today\'s lib (a patch that no longer applies is a bug the explorer stopped looking for)', () => {
    const patches = readdirSync('explore/bugs').filter((file) => file.endsWith('.patch'));
    expect(patches.length).toBeGreaterThanOrEqual(12);
    const stale = patches.filter((file) => spawnSync('git', ['apply', '--check', join('explore/bugs', file)], { encoding: 'utf8' }).status !== 0);
    expect(stale).toEqual([]);
  });

  // A patch cut with `diff -u` has no `diff --git` line: its header was read as empty, and a
  // real-Redis bug lost its `Explorer: real` options and ran in the simulator, unfindable there.
  it('reads every catalogued bug\'s title, the real-Redis options of those that need them, and the budgets of schedules of their own', () => {
    const bugs = (catalogue as () => { name: string; file: string; title: string; real?: string[]; seeds?: number }[])();
    expect(bugs.filter((bug) => bug.title.trim() === '').map((bug) => bug.name)).toEqual([]);
    const real = bugs.filter((bug) => readFileSync(bug.file, 'utf8').split('\n').some((line) => line.startsWith('Explorer: real')));
    expect(real.length).toBeGreaterThan(0);
    expect(real.filter((bug) => bug.real === undefined).map((bug) => bug.name)).toEqual([]);
    expect(bugs.find((bug) => bug.name === 'job-run-beside-own-run-after-data-loss')?.real).toEqual(['--target', 'single', '--workload', 'job', '--schedules', '20']);
    // `Budget: seeds N`: the bug is searched for N schedules, not the time budget (explore/bugs.mjs).
    expect(bugs.find((bug) => bug.name === 'extend-unbounded')?.seeds).toBe(150);
    expect(bugs.filter((bug) => bug.seeds !== undefined && bug.real !== undefined).map((bug) => bug.name)).toEqual([]);
  });
});
