import { AsyncResource } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { syncBuiltinESMExports } from 'node:module';
import timers from 'node:timers';
import { systemClock, type Clock, type ClockTimer } from '../../lib/core/time/clock.js';

const MAX_STEPS_PER_INSTANT = 100_000;

/** Something whose events a pause holds back and a crash drops: a simulated process. */
export interface EventOwner {
  readonly name: string;
  paused: boolean;
  crashed: boolean;
  /** Events that fell due while paused, released in their order on resume. */
  readonly held: SimEvent[];
}

export interface SimEvent {
  at: number;
  seq: number;
  fn: () => void;
  owner?: EventOwner;
  cancelled: boolean;
  /**
   * Input from outside the process (a reply, a release message), which Node's event loop reads
   * in its poll phase, after the timers that are due (see `VirtualScheduler.resumeAsEventLoop`).
   */
  io?: boolean;
  /** One turn of the event loop after a stall: its timers, then its input, then its immediates. */
  turn?: { timers: SimEvent[]; io: SimEvent[] };
}

/**
 * One virtual clock and one event queue for a whole simulated system: every timer of every
 * instance, every message between an instance and the store. Events run one at a time, earliest
 * first (ties in the order they were scheduled); after each one the promise chains and
 * `setImmediate` callbacks it started run to completion (see `drain`) before virtual time moves.
 * Nothing else moves time, so a seed replays the same run.
 */
export class VirtualScheduler {
  now = 0;
  private seq = 0;
  private readonly heap: SimEvent[] = [];
  /** Events run so far. */
  steps = 0;
  private stepsThisInstant = 0;
  /** The owner of the event running now (and of the promise chains it started), if any. */
  current?: EventOwner;

  schedule(at: number, fn: () => void, owner?: EventOwner, io?: boolean): SimEvent {
    const event: SimEvent = { at: Math.max(at, this.now), seq: ++this.seq, fn, owner, cancelled: false };
    if (io === true) event.io = true;
    this.push(event);
    return event;
  }

  cancel(event: SimEvent): void {
    event.cancelled = true;
  }

  /** Live events (not cancelled, owner not crashed), optionally those of one owner. */
  pending(owner?: EventOwner): number {
    let count = 0;
    for (const event of this.heap) {
      if (event.cancelled || event.owner?.crashed) continue;
      if (owner !== undefined && event.owner !== owner) continue;
      count += event.turn === undefined ? 1 : [...event.turn.timers, ...event.turn.io].filter((each) => !each.cancelled).length;
    }
    if (owner !== undefined) count += owner.held.filter((event) => !event.cancelled).length;
    return count;
  }

  pause(owner: EventOwner): void {
    owner.paused = true;
  }

  /** Releases what fell due during the pause, now, in the order it fell due. */
  resume(owner: EventOwner): void {
    owner.paused = false;
    const held = owner.held.splice(0).sort((a, b) => a.at - b.at || a.seq - b.seq);
    for (const event of held) {
      if (event.cancelled) continue;
      event.at = this.now;
      event.seq = ++this.seq;
      this.push(event);
    }
  }

  /**
   * Releases what fell due during the pause as Node's event loop runs it when a stall (a long GC
   * pause, a busy CPU) ends: in one turn, first every timer that fell due (its timers phase, in
   * the order they fell due, the promise chains each starts settled before the next), then every
   * reply and message that came in meanwhile (its poll phase, in the order they came), and only
   * then the `setImmediate` callbacks queued by either (its check phase). `resume` releases them
   * in the order they fell due, replies and timers mixed, each one's immediates run before the
   * next: a reply that came in before a bound's timer fell due is read first, and a bound decided
   * after the next poll is decided before a reply that came in after it. Neither is how the loop
   * reads a reply that came in during a stall whose end finds the bound's timer due.
   */
  resumeAsEventLoop(owner: EventOwner): void {
    owner.paused = false;
    const held = owner.held.splice(0).filter((event) => !event.cancelled).sort((a, b) => a.at - b.at || a.seq - b.seq);
    if (held.length === 0) return;
    const turn = { timers: held.filter((event) => event.io !== true), io: held.filter((event) => event.io === true) };
    this.push({ at: this.now, seq: ++this.seq, fn: () => undefined, owner, cancelled: false, turn });
  }

  /** Runs one turn of an event loop after a stall (see `resumeAsEventLoop`). */
  private async runTurn(event: SimEvent): Promise<void> {
    const queued = deferImmediates();
    try {
      for (const phase of [event.turn!.timers, event.turn!.io]) {
        for (const each of phase) {
          if (each.cancelled || each.owner?.crashed) continue;
          each.fn();
          // The promise chains it started; the immediates they queue wait for the check phase.
          await new Promise<void>((resolve) => realSetImmediate(resolve));
        }
      }
    } finally {
      releaseImmediates(queued);
    }
    await drain();
  }

  /**
   * Runs events up to virtual time `until` (or until `stop()` says so), calling `afterEach`
   * once the work of each event has settled.
   */
  async run(until: number, afterEach: () => void, stop?: () => boolean): Promise<void> {
    await drain();
    while (this.heap.length > 0) {
      if (stop?.()) return;
      const event = this.heap[0]!;
      if (event.at > until) break;
      this.pop();
      if (event.cancelled || event.owner?.crashed) continue;
      if (event.owner?.paused) {
        // A turn held by a pause begun as it came due: its events are held again, as they were.
        if (event.turn !== undefined) event.owner.held.push(...event.turn.timers, ...event.turn.io);
        else event.owner.held.push(event);
        continue;
      }
      if (event.at > this.now) this.stepsThisInstant = 0;
      else if (++this.stepsThisInstant > MAX_STEPS_PER_INSTANT) throw new Error(`the simulation ran ${MAX_STEPS_PER_INSTANT} events at ${this.now} ms without time moving (a busy loop)`);
      this.now = Math.max(this.now, event.at);
      this.steps++;
      this.current = event.owner;
      try {
        if (event.turn !== undefined) await this.runTurn(event);
        else {
          event.fn();
          await drain();
        }
      } finally {
        this.current = undefined;
      }
      afterEach();
    }
    if (!stop?.()) this.now = Math.max(this.now, until);
  }

  private push(event: SimEvent): void {
    const heap = this.heap;
    heap.push(event);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(event, heap[parent]!)) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = event;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, last)) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * An instance's clock: virtual time plus its own offset (a clock that jumped). Its timers are
 * events of the instance, so a pause holds them back and a crash drops them.
 */
export class InstanceClock implements Clock {
  offset = 0;

  constructor(
    private readonly scheduler: VirtualScheduler,
    private readonly owner: EventOwner,
  ) {}

  now(): number {
    return this.scheduler.now + this.offset;
  }

  setTimer(fn: () => void, ms: number): ClockTimer {
    // As Node's timers do, the callback runs in the async context (AsyncLocalStorage) it was set in.
    // Node fires a timer of less than 1 ms after 1 ms: a zero-delay loop still lets time pass.
    const event = this.scheduler.schedule(this.scheduler.now + Math.max(1, ms), AsyncResource.bind(fn), this.owner);
    return { cancel: () => this.scheduler.cancel(event) };
  }
}

/** The clock of the store (what `TIME` is to Redis) and of shutdown bounds: virtual time itself. */
export function worldClock(scheduler: VirtualScheduler): Clock {
  return {
    now: () => scheduler.now,
    // A new fencing counter starts at virtual time too (not the machine's wall clock): a seed's
    // schedule, its tokens included, replays the same on every run.
    epochNow: () => scheduler.now,
    setTimer(fn, ms) {
      const event = scheduler.schedule(scheduler.now + Math.max(1, ms), AsyncResource.bind(fn));
      return { cancel: () => scheduler.cancel(event) };
    },
  };
}

/**
 * Real time, as the runners' shutdown bounds read it (`performance.now()`, and timers on the
 * engine's `systemClock`: `LeaderElectionRunner.stop()` and the job runner's shutdown wait for
 * hooks and runs on them): the world's time, while a simulation runs. A timer set there belongs
 * to the instance whose event is running (a pause holds it back, as a SIGSTOP would), else to
 * nobody. Before this, such a wait ran on the machine's real clock, which a simulation never
 * moves: a hook that did not return kept a close waiting for a real second (or for ever).
 * Returns the undo.
 */
export function virtualizeRealTime(scheduler: VirtualScheduler): () => void {
  const saved = { now: systemClock.now, setTimer: systemClock.setTimer };
  systemClock.now = () => scheduler.now;
  systemClock.setTimer = (fn, ms) => {
    const event = scheduler.schedule(scheduler.now + Math.max(1, ms), AsyncResource.bind(fn), scheduler.current);
    return { cancel: () => scheduler.cancel(event), setUnref: () => undefined };
  };
  Object.defineProperty(performance, 'now', { value: () => scheduler.now, configurable: true, writable: true });
  return () => {
    systemClock.now = saved.now;
    systemClock.setTimer = saved.setTimer;
    delete (performance as unknown as { now?: unknown }).now;
  };
}

// --- Quiescence -------------------------------------------------------------------------------
// The engine and the in-memory store defer work with `setImmediate` (a reply "from the server",
// a release message, a renewal after the caller's code started). Their order is deterministic;
// only the moment everything has settled must be known, so that virtual time moves only then.
// While a simulation runs, `setImmediate` is replaced by a wrapper that counts the callbacks
// still to run (it changes nothing else), and `Math.random` by a seeded generator.

const realSetImmediate = globalThis.setImmediate;
const realClearImmediate = globalThis.clearImmediate;
const realRandom = Math.random;
const pendingImmediates = new Set<unknown>();

/** Immediates queued during a turn's timers and poll phases, run in its check phase (see `runTurn`). */
let deferred: Map<object, () => void> | undefined;

function deferImmediates(): Map<object, () => void> {
  if (deferred !== undefined) throw new Error('deferImmediates: one event loop turn at a time.');
  deferred = new Map();
  return deferred;
}

/** The immediate each stand-in became once its turn's check phase came. */
const released = new WeakMap<object, NodeJS.Immediate>();

function releaseImmediates(queued: Map<object, () => void>): void {
  deferred = undefined;
  for (const [stand, fn] of queued) released.set(stand, countingSetImmediate(fn));
}

function countingSetImmediate(this: unknown, fn: (...args: unknown[]) => void, ...args: unknown[]): NodeJS.Immediate {
  if (deferred !== undefined) {
    // A stand-in the library may keep and clear; nothing reads it otherwise.
    const stand = { ref: () => stand, unref: () => stand, hasRef: () => true } as unknown as NodeJS.Immediate;
    deferred.set(stand, () => fn(...args));
    return stand;
  }
  const immediate: NodeJS.Immediate = realSetImmediate(() => {
    pendingImmediates.delete(immediate);
    fn(...args);
  });
  pendingImmediates.add(immediate);
  return immediate;
}

function countingClearImmediate(immediate: NodeJS.Immediate | undefined): void {
  if (immediate !== undefined && deferred?.delete(immediate) === true) return;
  if (immediate !== undefined && released.has(immediate)) immediate = released.get(immediate);
  if (immediate !== undefined) pendingImmediates.delete(immediate);
  realClearImmediate(immediate);
}

let installed = false;

/**
 * Puts `set` and `clear` in place of `setImmediate` and `clearImmediate`, on the global and in
 * `node:timers`, where the library takes its own (lib/core/time/real-timers.ts: fake timers
 * replace only the global): `syncBuiltinESMExports` carries the module object's new functions to
 * its named exports, which the library's imports are bound to.
 */
function replaceImmediates(set: typeof setImmediate, clear: typeof clearImmediate): void {
  globalThis.setImmediate = set;
  globalThis.clearImmediate = clear;
  timers.setImmediate = set;
  timers.clearImmediate = clear;
  syncBuiltinESMExports();
}

/** Installs the counting `setImmediate` and a `Math.random` seeded with `seed`; returns the undo. */
export function enterSimulation(seed: number): () => void {
  if (installed) throw new Error('enterSimulation: one simulation at a time per process.');
  installed = true;
  pendingImmediates.clear();
  const random = mulberry32(seed ^ 0x5eed);
  replaceImmediates(countingSetImmediate as unknown as typeof setImmediate, countingClearImmediate as typeof clearImmediate);
  Math.random = random;
  return () => {
    replaceImmediates(realSetImmediate, realClearImmediate);
    Math.random = realRandom;
    installed = false;
  };
}

/** Lets every promise chain and counted `setImmediate` callback run. */
export async function drain(): Promise<void> {
  let turns = 0;
  do {
    await new Promise<void>((resolve) => realSetImmediate(resolve));
  } while (pendingImmediates.size > 0 && ++turns < 100_000);
}

/** A small seeded PRNG (mulberry32): floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
