import type { ExpectStatic } from 'vitest';
import type { Lock, LockService } from '../../lib/index.js';
import type { Clock, ClockTimer } from '../../lib/core/time/clock.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;

export interface AttemptCounter {
  /** Acquire attempts made since `countAttempts`. */
  readonly count: number;
  /** Acquire attempts made since `countAttempts` by the caller that ended up holding `lock` (counted by its owner token). */
  countFor(lock: Lock): number;
  /**
   * Settles when the application's release subscriptions are active and the next attempt after
   * that has been answered. A waiter then sleeps a whole refresh interval (250 ms) before it
   * polls again: a release sent right after reaches a live subscription and is not raced by a
   * poll (on a loaded machine a subscription can take longer than a refresh to come up, and the
   * waiter polls meanwhile, by design).
   */
  answered(): Promise<void>;
  /**
   * Settles once the application watches a lock's release messages (a waiter subscribed) and an
   * attempt answered after its subscription was active: the waiter sleeps until a release or
   * its next refresh, and a release now is one its process hears.
   */
  watching(): Promise<void>;
  /**
   * Settles once an attempt sent while the application's release subscription was live has
   * been answered and no attempt is in flight: a waiter whose polls are held (`holdPolls`) then
   * sleeps until a release, and hears it. Needs no further attempt, unlike `answered`.
   */
  listening(): Promise<void>;
  stop(): void;
}

/**
 * Counts the acquire attempts (acquire script calls, or their in-memory equivalent) one
 * application makes, from now on. A waiter woken by a release (the release message, or the
 * local handoff) holds the lock without another attempt; a waiter that found the lock by
 * polling made one. So "no attempt between the release and the acquisition" proves which path
 * woke it whatever the machine's load, where a millisecond bound proves only a quiet machine.
 */
export function countAttempts(locks: LockService): AttemptCounter {
  const manager = locks[LOCK_RUNNER] as unknown as { attempt: Attempt; notifier?: { channels: Map<string, unknown> } };
  const original = manager.attempt;
  // Another helper's count (recordWakes) may already wrap it: stop() puts that one back.
  const wrapped = Object.hasOwn(manager, 'attempt');
  let count = 0;
  const tokens: unknown[] = [];
  let onAnswer: (() => void)[] = [];
  let inFlight = 0;
  let answeredLive = false;
  // A ReleaseNotifier's channel is live once subscribed; the in-memory one's at once.
  const live = (): boolean => [...(manager.notifier?.channels.values() ?? [])].some((channel) => (channel as { live?: boolean }).live !== false);
  manager.attempt = function (this: unknown, ...args: unknown[]) {
    count++;
    inFlight++;
    const sentLive = live();
    // attempt(key, names, token, ...)
    tokens.push(args[2]);
    const reply = original.apply(this, args);
    const settled = (): void => {
      inFlight--;
      if (sentLive) answeredLive = true;
      const waiting = onAnswer;
      onAnswer = [];
      for (const resolve of waiting) resolve();
    };
    reply.then(settled, settled);
    return reply;
  };
  return {
    get count() {
      return count;
    },
    countFor(lock) {
      const token = (lock as unknown as { token: string }).token;
      return tokens.filter((sent) => sent === token).length;
    },
    async answered() {
      // A ReleaseNotifier's channels carry a `ready` promise; the in-memory one subscribes at once.
      const channels = [...(manager.notifier?.channels.values() ?? [])] as { ready?: Promise<void> }[];
      await Promise.all(channels.map((channel) => channel.ready?.catch(() => undefined)));
      await new Promise<void>((resolve) => onAnswer.push(resolve));
    },
    async listening() {
      while (!answeredLive || inFlight > 0) await new Promise<void>((resolve) => onAnswer.push(resolve));
    },
    async watching() {
      for (;;) {
        const watched = (manager.notifier?.channels.size ?? 0) > 0;
        await this.answered();
        if (watched) return;
      }
    },
    stop() {
      if (wrapped) manager.attempt = original;
      else delete (manager as Partial<typeof manager>).attempt;
    },
  };
}

/** What `releaseBetweenPolls` saw. */
export interface ReleasedBetweenPolls {
  /** The lock the waiter got. */
  lock: Lock;
  /**
   * The waiter's acquire attempts from the release to its holding the lock: 0 when the release
   * woke it (its message, a grant, the local handoff); a poll makes one.
   */
  attemptsSinceRelease: number;
}

/**
 * Releases `held` while its waiter is between two polls, and counts what the waiter did after:
 * waits for `attempts[after]()` (`answered`, `watching` or `listening`, see `AttemptCounter`: one
 * of the waiter's polls answered, so its next one is a whole refresh interval, 250 ms, away, or
 * held by `holdPolls`), releases,
 * and awaits `waiting`. A test asserts `attemptsSinceRelease` is 0 to show the release woke the
 * waiter, not a poll, whatever the machine's load.
 *
 * @example
 * const attempts = countAttempts(waiter.locks);
 * const waiting = waiter.locks.acquire('k', { waitTimeout: 15_000 });
 * await expect.poll(() => subscribers(admin, 'lock:{k}:released')).toBe(1);
 * const { lock, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
 * expect(attemptsSinceRelease).toBe(0);
 */
export async function releaseBetweenPolls(
  attempts: AttemptCounter,
  held: Lock,
  waiting: Promise<Lock>,
  after: 'answered' | 'watching' | 'listening' = 'answered',
): Promise<ReleasedBetweenPolls> {
  await attempts[after]();
  const polled = attempts.count;
  await held.release();
  const lock = await waiting;
  return { lock, attemptsSinceRelease: attempts.count - polled };
}

/**
 * The engine's deadline for a held lock's current lease, on the monotonic clock that
 * `performance.now()` reads: counted from before its acquire (or last renewal) was sent, minus
 * a drift margin, so the store cannot have let the lease go before it. A check "not before the
 * lease ran out" compares against it instead of against wall-clock milliseconds.
 */
export const leaseDeadline = (lock: Lock): number => (lock as unknown as { deadline: number }).deadline;

/** One step of a waiter, as `recordWakes` logs it. */
export type WakeStep = 'busy' | 'queued' | 'won' | 'freed' | 'granted';

export interface WakeLog {
  /**
   * In order: each attempt's outcome (`busy`; `queued`, busy after asking to join the FIFO
   * queue, as every FIFO waiter and a barging one that lost too many races do; or `won` when it
   * took the lock) and each wake-up
   * of a wait: `freed` (a release message said the lock is free: barging waiters race for it) or
   * `granted` (a release handed the lock to this waiter, which holds it without an attempt).
   */
  readonly steps: readonly WakeStep[];
  /** Races for a freed lock lost: a `freed` wake-up followed by a busy attempt. */
  readonly lostRaces: number;
  stop(): void;
}

/**
 * Logs how one application's waiters were woken and what their attempts found, from now on: so
 * a test can say which path gave a waiter the lock (a release message, a grant, a poll) and how
 * many races it lost, whatever the machine's load.
 */
export function recordWakes(locks: LockService): WakeLog {
  type Watch = { onGrant(listener: (fencingToken: number) => void): () => void; takeGrant(): number | undefined };
  type Notifier = { watch(channel: string, token: string, racesFreed: boolean): Watch };
  const manager = locks[LOCK_RUNNER] as unknown as { attempt: Attempt; notifier?: Notifier };
  const steps: WakeStep[] = [];
  const wake = (fencingToken: number): void => void steps.push(fencingToken === 0 ? 'freed' : 'granted');
  const original = manager.attempt;
  manager.attempt = function (this: unknown, ...args: unknown[]) {
    const reply = original.apply(this, args);
    // A lock, or a busy reply; no step for an attempt that ended otherwise (no answer, a late one).
    const queued = args[4] === true;
    reply.then((outcome) => outcome !== null && typeof outcome === 'object' && steps.push('pttl' in outcome ? (queued ? 'queued' : 'busy') : 'won'), () => undefined);
    return reply;
  };
  const notifier = manager.notifier!;
  const watch = notifier.watch;
  notifier.watch = function (this: Notifier, channel: string, token: string, racesFreed: boolean) {
    const watched = watch.call(this, channel, token, racesFreed);
    return {
      ...watched,
      takeGrant: () => {
        const taken = watched.takeGrant();
        if (taken !== undefined) wake(taken);
        return taken;
      },
      onGrant: (listener: (fencingToken: number) => void) =>
        watched.onGrant((fencingToken) => {
          wake(fencingToken);
          listener(fencingToken);
        }),
    };
  };
  return {
    steps,
    get lostRaces() {
      return lostRaces(steps);
    },
    stop() {
      delete (manager as Partial<typeof manager>).attempt;
      delete (notifier as Partial<Notifier>).watch;
    },
  };
}

/** Races for a freed lock lost in `steps` (see `WakeLog`). */
export function lostRaces(steps: readonly WakeStep[]): number {
  return steps.filter((step, i) => (step === 'busy' || step === 'queued') && steps[i - 1] === 'freed').length;
}

export interface HeldPolls {
  /** Arms the timers held so far (each for its whole delay, from now) and stops holding. */
  resume(): void;
  /**
   * Timers held and not cancelled: one per waiter asleep in its wait (its next refresh). A
   * subscription's bound is cancelled once the subscription is live, so with no attempt in
   * flight this counts the waiters that sleep until a release.
   */
  readonly sleeping: number;
}

/**
 * Stops one application's waiters from polling, from now until `resume()`: the timers its
 * acquisitions set from now on (a waiter's next refresh, which also ends its wait, and the bound
 * on a subscription) are held, not armed. A waiter that gets a lock meanwhile was woken by a
 * release (its message, or the local handoff), however loaded the machine: where "its next poll
 * is 250 ms away" holds only on a quiet one. A waiter whose wake-up is broken waits until the
 * test times out. Hold before the waiter's first attempt: a timer armed before is not held.
 */
export function holdPolls(locks: LockService): HeldPolls {
  const manager = locks[LOCK_RUNNER] as unknown as { clock: Clock };
  const clock = manager.clock;
  const held: { fn: () => void; ms: number; unref?: boolean; cancelled: boolean; timer?: ClockTimer }[] = [];
  manager.clock = {
    now: () => clock.now(),
    setTimer(fn, ms, unref) {
      const entry: (typeof held)[number] = { fn, ms, unref, cancelled: false };
      held.push(entry);
      return {
        cancel() {
          entry.cancelled = true;
          entry.timer?.cancel();
        },
      };
    },
  };
  return {
    resume() {
      manager.clock = clock;
      for (const entry of held.splice(0)) if (!entry.cancelled) entry.timer = clock.setTimer(entry.fn, entry.ms, entry.unref);
    },
    get sleeping() {
      return held.filter((entry) => !entry.cancelled).length;
    },
  };
}

/** One mutex release script call an application sent, as `recordReleases` logs it. */
export interface ReleaseRecord {
  /** The owner token it released. */
  token: string;
  /** The park token it asked to park the lock under (`LockParking`), if it asked. */
  park: string | undefined;
  /** Its reply, once answered: whether it parked, and whether barging waiters waited then. */
  parked?: boolean;
  contended?: boolean;
}

export interface ReleaseLog {
  readonly releases: readonly ReleaseRecord[];
  /**
   * Settles once every release logged so far has been answered (or has failed), its record
   * complete: a waiter of another application can be served before the answer of the release
   * that woke it reaches this one.
   */
  answered(): Promise<void>;
  stop(): void;
}

/**
 * Logs the mutex release script calls (or their in-memory equivalent) one application sends,
 * from now on: whether each asked to park the lock and whether it did. A greedy loop on a
 * parked lock makes one such call per acquisition and no acquire attempt, whatever the load.
 */
export function recordReleases(locks: LockService): ReleaseLog {
  type Store = { release(keys: unknown, token: string, lease: number, park?: { token: string }): Promise<{ parked?: { contended: boolean } }> };
  const store = (locks[LOCK_RUNNER] as unknown as { store: Store }).store;
  const original = store.release;
  const releases: ReleaseRecord[] = [];
  const recorded: Promise<void>[] = [];
  store.release = function (this: unknown, ...args: Parameters<Store['release']>) {
    const record: ReleaseRecord = { token: args[1], park: args[3]?.token };
    releases.push(record);
    const reply = original.apply(this, args);
    recorded.push(
      reply.then(
        (settled) => {
          record.parked = settled.parked !== undefined;
          record.contended = settled.parked?.contended ?? false;
        },
        () => undefined,
      ),
    );
    return reply;
  };
  return {
    releases,
    async answered() {
      await Promise.all(recorded);
    },
    stop() {
      delete (store as Partial<Store>).release;
    },
  };
}

/** Blocks the event loop for `ms`, as a long GC pause or a CPU-bound call does: no timer runs meanwhile. */
export function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

/**
 * Blocks the event loop for `ms` once, right after ioredis `client` (a `Redis` or a `Cluster`) has
 * written the next command named `command` (lower case) once `arm(command)` was called: ioredis
 * writes to a ready socket at once, so Redis' reply comes in while the loop is blocked, before it
 * can be read. `armed` says whether that command is still to come.
 */
export function stallAfterCommand(client: { sendCommand: unknown }, ms: number): { arm(command: string): void; readonly armed: boolean } {
  let armed: string | undefined;
  const send = (client.sendCommand as (...args: unknown[]) => unknown).bind(client);
  client.sendCommand = (command: { name: string }, ...rest: unknown[]) => {
    const sent = send(command, ...rest);
    if (armed !== undefined && command.name.toLowerCase() === armed) {
      armed = undefined;
      queueMicrotask(() => blockEventLoop(ms));
    }
    return sent;
  };
  return {
    arm: (command) => void (armed = command),
    get armed() {
      return armed !== undefined;
    },
  };
}

/**
 * Live Node timers (`Timeout` resources) once the ones of the runtime that come and go have
 * settled: the least of ten looks 100 ms apart. A test compares it before an application starts
 * and after it closed, to find a timer the close left ref'd.
 */
export async function settledTimeouts(): Promise<number> {
  let least = Infinity;
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    least = Math.min(least, process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length);
  }
  return least;
}

/** How a promise settled, once it has: a record a test can poll while what it waits on stays frozen. */
export interface SettledRecord<T> {
  settled?: { value?: T; error?: unknown };
}

/** Settles `promise` into a record that can be polled (`expect.poll(() => record.settled)`) while the server stays frozen. */
export function settledRecord<T>(promise: Promise<T>): SettledRecord<T> {
  const seen: SettledRecord<T> = {};
  promise.then(
    (value) => (seen.settled = { value }),
    (error: unknown) => (seen.settled = { error }),
  );
  return seen;
}

/**
 * After `held`'s release in a failover spec: the waiter (`next`, what its `acquire()` settled
 * with, or 'not woken') was woken by the release's grant message, before any attempt after the
 * release (a poll would have come first). One attempt may follow it: a waiter the failover cost
 * its place confirms a grant before it holds it, since a promoted replica may have lost the
 * newest fencing tokens. `stepsBefore` and `attemptsBefore`: the waiter's wake steps and attempts
 * counted before the release. Releases the waiter's lock.
 */
export async function expectWokenByGrant(expect: ExpectStatic, next: Lock | 'not woken', held: Lock, wakes: WakeLog, stepsBefore: number, attempts: AttemptCounter, attemptsBefore: number): Promise<void> {
  expect(next).not.toBe('not woken');
  const after = wakes.steps.slice(stepsBefore);
  expect(after[0]).toBe('granted');
  expect(after.slice(1).every((step) => step === 'won')).toBe(true);
  expect(attempts.count - attemptsBefore).toBe(after.length - 1);
  if (typeof next === 'string') return;
  // The grant's token; when an attempt confirmed it, that attempt took the next one.
  if (after.length === 1) expect(next.fencingToken).toBe(held.fencingToken + 1);
  else expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
  await next.release();
}
