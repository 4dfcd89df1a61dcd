import fc from 'fast-check';

/** Fault kinds the injector knows, as counted in the explorer's report. */
export const FAULT_KINDS = [
  'reply-delayed',
  'reply-lost-after',
  'reply-lost-before',
  'message-lost',
  'message-duplicated',
  'pause',
  'crash',
  'shutdown',
  'store-restart',
  'clock-jump',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * What the explorer counts: the kinds it draws, and `reply-frozen`, drawn as a `reply-lost-*`
 * window (see `frozenOf`), so that adding it left every seed's schedules drawn as before.
 */
export const COUNTED_KINDS = [...FAULT_KINDS, 'reply-frozen'] as const;
export type CountedKind = (typeof COUNTED_KINDS)[number];

/**
 * A `reply-lost-*` window that is a connection (or the whole store) frozen past a lease instead:
 * its commands reach the store (`reply-lost-after`) or not (`reply-lost-before`), and their replies
 * are held back `hold` ms, longer than the plan's leases and the 1 s grace a release's answer
 * gets, then delivered late (a command that never reached the store: a connection error) or
 * `never`, as a network cut that resets nothing leaves them (no error either).
 */
export interface Frozen {
  hold: number;
  never: boolean;
  /** Every instance's commands (the store frozen), not only the window's instance's. */
  everyone: boolean;
}

/**
 * How many tokens each fencing counter loses when a store restart is one from an older snapshot,
 * drawn from `amount` (which a restart has no other use for): half of the restarts (never one of
 * `amount` 0, so the fixed plans of the tests still restart empty), 1 to 64 tokens (a counter
 * with fewer comes back at 1: harsher than a real snapshot, which would hold its first token,
 * taken at the clock, or nothing). Such a restart
 * brings back counters below tokens handed out before it (the last writes were not saved), where
 * one restarted empty starts its counters again at the clock, above them; its leases and queues
 * have run out meanwhile (the restart took longer than they last). Undefined: restarts empty.
 */
export function rolledBackOf(fault: Fault): number | undefined {
  if (fault.kind !== 'store-restart' || fault.amount % 2 !== 1) return undefined;
  return 1 + ((fault.amount >> 1) % 64);
}

/**
 * Whether a fault is a frozen window, drawn from `amount` (which the `reply-lost-*` kinds have no
 * other use for, as a shutdown's refusal is drawn from its `duration`): one in three of them, never
 * one of `amount` 0 (the fixed plans of the tests, and what shrinking tends to, stay what they were). The
 * hold is 1.5 to 3 times the plan's ttl, or the 1 s grace if longer (a release waits at least that
 * long for its answer, whatever its lease: a shorter hold would only be a delay).
 */
export function frozenOf(fault: Fault, ttl: number): Frozen | undefined {
  if ((fault.kind !== 'reply-lost-before' && fault.kind !== 'reply-lost-after') || fault.amount % 3 !== 1) return undefined;
  const base = Math.max(ttl, 1_000);
  const hold = Math.round(base * (1.5 + ((fault.amount >> 2) % 101) / 100 * 1.5));
  return { hold, never: ((fault.amount >> 1) & 1) === 1, everyone: ((fault.amount >> 9) & 3) === 0 };
}

/** One fault of a schedule. Windowed kinds affect every command or message of `instance` in [at, at + duration). */
export interface Fault {
  kind: FaultKind;
  /** Virtual ms from the start. */
  at: number;
  instance: number;
  /** Window length (delays, losses, pauses), ms. */
  duration: number;
  /** reply-delayed: extra ms per reply; clock-jump: the new clock offset, ms. */
  amount: number;
  /**
   * pause, crash, shutdown: hit the instance whose user code holds the most at that moment
   * (a semaphore section counts its permits) instead of `instance`, as the real-Redis explorer
   * aims half of its worker faults at a holder.
   */
  onHolder?: boolean;
}

/** Everything one simulated run depends on: the same plan replays the same run. */
export interface Plan {
  /** Seeds latencies, jitter and every `Math.random` of the engine. */
  seed: number;
  instances: number;
  /** Lease of every lock, ms. */
  ttl: number;
  /** Callers per instance of each workload. */
  mutexCallers: number;
  lockedCallers: number;
  semaphoreCallers: number;
  /**
   * Semaphore callers with a lease of `LONG_TTL_MS` on the same semaphore: their watchdog renews
   * more than a grant lease apart, so a permit cut back to the grant lease runs out between two
   * renewals (the path of issue 23 item 1).
   */
  longSemaphoreCallers: number;
  rwCallers: number;
  transferCallers: number;
  /**
   * Barging callers of one key that take it again the moment they release it, a few rounds a
   * call: their process parks the lock between rounds (see `LockParking`), and other
   * instances' greedy callers wait as barging waiters, which bounds each streak.
   */
  greedyCallers: number;
  /**
   * Callers of one more key that call `lock.extend(ttl)` during their work: to shorter and longer
   * leases than the one they hold, sometimes twice without waiting for the first, sometimes while
   * the watchdog's renewal is on its way. Optional: fixed plans written before it have none.
   */
  extendCallers?: number;
  /**
   * Callers (per instance) of one more key, `sw`, with short waitTimeouts: 0, under the 1 s grace an attempt's answer
   * gets, or over it. Each call that fails with the wait-timeout error is checked against what its
   * attempts met in the store. Optional: fixed plans written before it have none.
   */
  shortWaitCallers?: number;
  jobs: boolean;
  leader: boolean;
  /**
   * What the election's hooks do (with `leader`), as real ones do: see `LeaderHooks`. Optional:
   * fixed plans written before it have hooks that return at once.
   */
  leaderHooks?: LeaderHooks;
  faults: Fault[];
}

/**
 * The hooks of the simulated `@LeaderElection` class, the same on every instance of a plan
 * (docs/jobs-and-leaders.md: hooks, "Shutdown").
 */
export interface LeaderHooks {
  /**
   * `onLeadershipAcquired(lock)`: `returns` at once (the class only counts terms); works `until
   * aborted` (steps under the term, writing with its fencing token, until its signal aborts: the
   * documented pattern); `hangs` (works as that, then ignores the abort and never returns);
   * `extends` (works until aborted, reading `lock.held` and calling `lock.extend()` after each
   * step, so that a loss may be seen inside the term's own call chain).
   */
  acquired: 'returns' | 'until-aborted' | 'hangs' | 'extends';
  /** `onLeadershipLost`: `returns` at once, is `slow` (a quarter to three quarters of a ttl), or `hangs` (never returns). */
  lost: 'returns' | 'slow' | 'hangs';
  /** When (ms, before the faults' horizon) whoever leads then releases its term by hand (`leaderLock(key).release()`). */
  releases: number[];
  /**
   * After the faults, the leader probe releases the term by hand; with a number, the releasing
   * instance then closes that many ms later (while a hung hook may still hold its term's end).
   */
  closeAfterRelease?: number;
  /** The election's own ttl (`@LeaderElection(key, { ttl })`), here longer than `shutdownTimeout`; else the plan's. */
  ttl?: number;
  /**
   * `onLeadershipAcquired` throws, in every term that begins before the faults' horizon (later
   * ones behave as `acquired` says, so that someone leads for good once the faults stop):
   * `at-once` (synchronously, before any work), `rejects` (a rejected promise, before any work),
   * `after-step` (after one step of work under the term, an awaited sleep: whether or not the term
   * ended meanwhile), `after-hand-release` (calls `lock.release()` on its own term without awaiting
   * it, then throws before Redis answers). docs/jobs-and-leaders.md: the instance steps down (the
   * signal aborts, `stepped-down`, then onLeadershipLost runs, then the lease is given back) and
   * tries again later. Optional, drawn last: absent (fixed plans, most drawn ones), it never throws.
   */
  throws?: LeaderThrows;
  /** `onLeadershipLost` throws once it has done what `lost` says (never, for one that `hangs`). Optional, drawn last. */
  lostThrows?: boolean;
  /**
   * Work run through `runAsLeader()` (`LeadershipService.runAsLeader(key, work)`, which calls the
   * election's runner), as a cron that fires on every instance runs it (docs/jobs-and-leaders.md):
   * every 100 to 300 ms until the faults' horizon, each instance asks; on the leader the work
   * runs a step or two under the term (writing with its fencing token), then a `using()` call of
   * a lock of its own (key `lw`) whose code stops on that lock's signal only, and, once the term's
   * signal aborted, half the time winds down a while (up to a ttl) before it returns. Optional,
   * drawn after every other field: absent (fixed plans, half of the drawn ones), no work runs;
   * nor does it in a plan whose onLeadershipAcquired does not throw (`throws`): its step-downs are
   * what the work is judged at, and the other leader plans run as before.
   */
  work?: boolean;
}

export const LEADER_THROWS = ['at-once', 'rejects', 'after-step', 'after-hand-release'] as const;
export type LeaderThrows = (typeof LEADER_THROWS)[number];

export const LEADER_ACQUIRED_HOOKS = ['returns', 'until-aborted', 'hangs', 'extends'] as const;
export const LEADER_LOST_HOOKS = ['returns', 'slow', 'hangs'] as const;

/** Faults happen (and callers start calls) in [0, FAULT_HORIZON_MS). */
export const FAULT_HORIZON_MS = 3_000;
export const TTLS = [300, 600, 1_500] as const;
/** Over three times the 1 s grant lease (`WAITER_LEASE_MS`): renewed every ttl / 3, so after more than a second. */
export const LONG_TTL_MS = 4_000;

/**
 * Offsets a clock may jump to, ms. Forward jumps are a clock running fast (leases end early
 * locally: safe); backward ones stay under the drift margin (at least 3 ms for any ttl).
 */
export const CLOCK_OFFSET_RANGE = { min: -2, max: 60 } as const;

/** Faults that may aim at the instance holding the most (see `Fault.onHolder`). */
const TARGETABLE = new Set<FaultKind>(['pause', 'crash', 'shutdown']);

function faultArbitrary(instances: number): fc.Arbitrary<Fault> {
  return fc.record({
    // Pauses and delays find the most (a holder's view of time and the store's part ways): drawn more often.
    kind: fc.oneof(
      { arbitrary: fc.constantFrom(...FAULT_KINDS), weight: 10 },
      { arbitrary: fc.constant<FaultKind>('pause'), weight: 3 },
      { arbitrary: fc.constant<FaultKind>('reply-delayed'), weight: 2 },
    ),
    at: fc.integer({ min: 0, max: FAULT_HORIZON_MS - 1 }),
    instance: fc.integer({ min: 0, max: instances - 1 }),
    duration: fc.integer({ min: 1, max: 2_500 }),
    amount: fc.integer({ min: 0, max: 2_500 }),
  })
    // Drawn from `amount` (unused by these kinds), not as a field of its own: the schedules of a
    // seed stay those of the explorer before it, so each catalogued bug is found where it was.
    .map((fault) => (TARGETABLE.has(fault.kind) && fault.amount % 2 === 1 ? { ...fault, onHolder: true } : fault));
}

/** The schedules fast-check generates and shrinks: fewer faults, callers and instances are simpler. */
export function planArbitrary(): fc.Arbitrary<Plan> {
  return fc.integer({ min: 2, max: 4 }).chain((instances) =>
    fc.record({
      seed: fc.integer({ min: 0, max: 0x7fffffff }),
      instances: fc.constant(instances),
      ttl: fc.constantFrom(...TTLS),
      mutexCallers: fc.integer({ min: 0, max: 2 }),
      lockedCallers: fc.integer({ min: 0, max: 1 }),
      semaphoreCallers: fc.integer({ min: 0, max: 2 }),
      rwCallers: fc.integer({ min: 0, max: 2 }),
      transferCallers: fc.integer({ min: 0, max: 1 }),
      jobs: fc.boolean(),
      leader: fc.boolean(),
      faults: fc.array(faultArbitrary(instances), { maxLength: 8 }),
      // Last: the fields before it are drawn as they were before it existed. None in half of
      // the plans: with long callers in every plan the other workloads' rarer shapes came up
      // far less often (a renewal counted from its reply went unfound in 750 schedules).
      longSemaphoreCallers: fc.constantFrom(0, 0, 1, 2),
      // After it, for the same reason.
      greedyCallers: fc.constantFrom(0, 0, 1, 2),
      // After it, for the same reason.
      extendCallers: fc.constantFrom(0, 0, 1, 2),
      // After it, for the same reason.
      shortWaitCallers: fc.constantFrom(0, 0, 1, 2),
      // After it, for the same reason (and it matters only with `leader`).
      leaderHooks: fc.record({
        acquired: fc.constantFrom<LeaderHooks['acquired']>('returns', ...LEADER_ACQUIRED_HOOKS),
        lost: fc.constantFrom<LeaderHooks['lost']>('returns', ...LEADER_LOST_HOOKS),
        releases: fc.array(fc.integer({ min: 0, max: FAULT_HORIZON_MS - 1 }), { maxLength: 2 }),
        closeAfterRelease: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
        ttl: fc.constantFrom<number | undefined>(undefined, 2_000),
        // Last (as each field of the plan above, after the ones before it): every field before
        // them is drawn as before they existed, and a plan that draws neither (undefined, the
        // first of each: what shrinking tends to) is the plan of before, shrinks as it did (no
        // shrink of its own to insert) and prints as it did (JSON leaves undefined out).
        throws: fc.constantFrom<LeaderThrows | undefined>(undefined, undefined, undefined, undefined, ...LEADER_THROWS),
        lostThrows: fc.constantFrom<true | undefined>(undefined, undefined, true),
        // After them, for the same reason.
        work: fc.constantFrom<true | undefined>(undefined, true),
      }),
    }),
  );
}

/** A plan as one line, for a trace header. */
export function describePlan(plan: Plan): string {
  const { faults, ...rest } = plan;
  const frozen = (f: Fault): string => {
    const how = frozenOf(f, plan.ttl);
    return how === undefined ? '' : ` (frozen: replies held ${how.hold} ms, ${how.never ? 'never delivered' : 'then delivered'}${how.everyone ? ', every instance' : ''})`;
  };
  return `${JSON.stringify(rest)} faults=${faults.map((f) => `${f.kind}@${f.at}/${f.onHolder ? 'holder' : `i${f.instance}`}/${f.duration}ms/${f.amount}${frozen(f)}`).join(', ') || 'none'}`;
}
