import type { AnyLockOptions } from '../../interfaces/redis-lock-options.interface.js';
import type { LockRedisKeys } from '../keys/lock-key.js';
import type { LockTiming } from '../options/lock-options.js';
import type { ParkRequest, ReleaseReply } from '../stores/lock-store.js';
import type { Clock } from '../time/clock.js';
import type { HeldLock } from './held-lock.js';
import { ownerToken } from './owner-token.js';
import { setImmediate } from '../time/real-timers.js';

/**
 * While barging waiters (of any process, this one's too) wait, a process parks a key's lock at
 * most this many times in a row (a *streak*), then really releases it and steps aside (see
 * `LockParking`).
 */
export const PARKS_PER_STREAK = 256;
/** ...and for at most this long, counted from the first parked release that found them waiting. */
export const PARK_STREAK_MS = 40;
/**
 * After a streak, this process' callers of the key hold back this long, so that a waiter the
 * release woke takes the lock (its attempt is one message and one command away).
 */
export const PARK_STEP_ASIDE_MS = 2;
/** A step aside starts at the latest this long after the waking release was sent, answered or not. */
export const STEP_ASIDE_ANSWER_BOUND_MS = 250;

/** Keys tracked at most; the oldest is dropped (with its parked lock freed) past it. */
const MAX_KEYS = 1_000;

/** What the parking needs of the lock engine (`LockManager`). */
export interface ParkingHost {
  readonly clock: Clock;
  /**
   * What a step aside is timed on: real time even when `clock` is a test's manual clock (a
   * process' own callers would otherwise wait for it until the test moves the clock), the
   * simulation's own clock in the explorer (see `LockBackend.shutdownClock`).
   */
  readonly asideClock: Clock;
  readonly closed: boolean;
  /** Records a lock this process holds in Redis under `token` (see `AcquisitionHost.hold`). */
  hold(key: string, names: LockRedisKeys, token: string, fencingToken: number, timing: LockTiming, leaseStart: number, lease: number): HeldLock;
  /** Hands a held lock to the caller and tells the listeners (`acquired`). */
  acquired(lock: HeldLock, calledAt: number, options: AnyLockOptions | undefined, afterWaiting: boolean): HeldLock;
  /**
   * Frees a parked lock: an owner-checked release under the park token, which wakes or hands
   * over as any release. `until`: when its lease has surely ended in Redis (a release that fails
   * is sent again until then, as a holder's is).
   */
  unpark(names: LockRedisKeys, token: string, until: number): void;
}

/** A lock a release parked: held in Redis under `token`, for the next caller of this process. */
interface Parked {
  token: string;
  fencingToken: number;
  /** When the release that parked it was sent: its lease in Redis started no earlier. */
  leaseStart: number;
  ttl: number;
}

/** A release of a tracked key on its way (see `LockParking.releasing`). */
export interface ReleaseTicket {
  readonly park: ParkRequest | undefined;
  readonly sentAt: number;
  /** A park request's: settles when its answer came (callers that asked meanwhile wait for it). */
  readonly answered?: Promise<void>;
  readonly settle?: () => void;
  /** A release that ends a streak: starts the step aside once it is answered (see `stepAside`). */
  readonly stepAside?: () => void;
}

/** What this process knows of one barging mutex key. */
interface KeyState {
  names: LockRedisKeys;
  /** A caller asked for the key again in the turn a release of it came back, or while one was on its way. */
  greedy: boolean;
  /** A release came back in this turn of the event loop (until the next `setImmediate`). */
  recent: boolean;
  /** A caller asked for the key since `recent` was set. */
  asked: boolean;
  /** The park request on its way, if any; callers that ask meanwhile wait for its answer. */
  inFlight: ReleaseTicket | undefined;
  parked: Parked | undefined;
  /** Parked releases that found barging waiters (`contended`) in the current streak, and when the first came back. */
  contendedParks: number;
  contendedSince: number;
  /** The streak ended: this process' callers of the key wait for this before they ask. */
  stepAside: Promise<void> | undefined;
}

/**
 * Parking of hot barging mutexes (`fairness: 'barging'`; see docs/locks.md, "FIFO or barging").
 *
 * A process whose callers take a key again the moment they release it (its *greedy mark*: a
 * barging acquire of the key in the turn of the event loop in which a release of it came back,
 * or while a parking release of it was on its way) sends its next releases with a park request:
 * the release script, after its owner check and with nobody queued, hands the lock to a fresh
 * owner token of this process under the next fencing token, for the caller's ttl, and wakes
 * nobody. The next barging
 * acquire of the key in this process, within that turn, takes it without a round trip; one
 * nobody took by the next `setImmediate` is freed by a plain release under the park token. A
 * greedy loop so costs one script call per acquisition, and a polite releaser (no greedy mark)
 * nothing new: its releases are plain ones.
 *
 * Fairness: a parked release tells whether barging waiters wait. While they do, a process parks
 * at most `PARKS_PER_STREAK` times or for `PARK_STREAK_MS`, then sends a plain release (which
 * wakes them) and its callers of the key hold back for `PARK_STEP_ASIDE_MS`. A waiter that still
 * loses races queues (see `BARGING_RACES_BEFORE_QUEUE`), and a queued waiter is never parked
 * over: the script then releases and hands the lock over as usual.
 */
export class LockParking {
  private readonly keys = new Map<string, KeyState>();

  constructor(private readonly host: ParkingHost) {}

  /**
   * A barging mutex acquire of `names.lock` is starting: the lock parked for it (handed out, no
   * round trip), or a promise to wait for before asking (a park on its way, or a step aside),
   * or undefined to ask Redis as usual. `calledAt`: when the call began (it may have waited for
   * a park's answer already), what its `acquired` event counts from.
   */
  asking(key: string, names: LockRedisKeys, timing: LockTiming, options: AnyLockOptions | undefined, newToken: () => string, calledAt = this.host.clock.now()): HeldLock | Promise<void> | undefined {
    const state = this.keys.get(names.lock);
    if (state === undefined) {
      this.track(names);
      return undefined;
    }
    if (state.recent) state.asked = true;
    if (state.recent || state.inFlight !== undefined) state.greedy = true;
    if (state.stepAside !== undefined) return state.stepAside;
    if (state.inFlight?.answered !== undefined) return state.inFlight.answered;
    const parked = state.parked;
    if (parked === undefined) return undefined;
    state.parked = undefined;
    // Another ttl, or another holder label in the token: free it, and ask as usual behind that.
    if (parked.ttl !== timing.ttl || holderPart(parked.token) !== holderPart(newToken())) {
      this.host.unpark(names, parked.token, leaseEnded(parked));
      return undefined;
    }
    const { host } = this;
    const lock = host.hold(key, names, parked.token, parked.fencingToken, timing, parked.leaseStart, parked.ttl);
    lock.parks = true;
    // Its lease ran out here (a stalled event loop): never hand it out.
    if (host.clock.now() >= lock.deadline) {
      lock.expire();
      return undefined;
    }
    return host.acquired(lock, calledAt, options, false);
  }

  /**
   * A release of a mutex `token` held (on a `ttl` ms lease) is about to be sent: undefined for a
   * key this process does not track (a plain release, nothing to do), else a ticket, with a park
   * request when the key is greedy and no streak bound is reached, to pass to `answered`.
   */
  releasing(names: LockRedisKeys, token: string, ttl: number): ReleaseTicket | undefined {
    const state = this.keys.get(names.lock);
    if (state === undefined) return undefined;
    const now = this.host.clock.now();
    let park: ParkRequest | undefined;
    let stepAside: (() => void) | undefined;
    if (state.greedy && state.inFlight === undefined && state.stepAside === undefined && !this.host.closed) {
      if (state.contendedParks === 0 || (state.contendedParks < PARKS_PER_STREAK && now - state.contendedSince < PARK_STREAK_MS)) {
        park = { token: parkToken(token), ttl };
      } else {
        stepAside = this.stepAside(state);
      }
    }
    if (park === undefined) return { park, sentAt: now, stepAside };
    let settle!: () => void;
    const answered = new Promise<void>((done) => (settle = done));
    const ticket: ReleaseTicket = { park, sentAt: now, answered, settle };
    state.inFlight = ticket;
    return ticket;
  }

  /** The release of `ticket` came back with `reply` (undefined: it failed). */
  answered(names: LockRedisKeys, ticket: ReleaseTicket, reply: ReleaseReply | undefined): void {
    ticket.settle?.();
    ticket.stepAside?.();
    const state = this.keys.get(names.lock);
    if (state?.inFlight === ticket) state.inFlight = undefined;
    const parked = reply?.parked;
    // No answer (a timeout, a reset), or a refusal (maybe a resend of a release that ran): the
    // script may have parked the lock under a token nobody holds, for a whole ttl. Free it;
    // owner-checked, so this frees nothing else.
    const until = ticket.park === undefined ? 0 : leaseEnded({ leaseStart: ticket.sentAt, ttl: ticket.park.ttl });
    if (ticket.park !== undefined && parked === undefined && reply?.released !== true) this.host.unpark(names, ticket.park.token, until);
    if (state === undefined) {
      // Dropped meanwhile (see MAX_KEYS): nobody can take a lock parked for it.
      if (parked !== undefined && ticket.park !== undefined) this.host.unpark(names, ticket.park.token, until);
      return;
    }
    if (parked !== undefined && ticket.park !== undefined) {
      if (this.host.closed) {
        this.host.unpark(names, ticket.park.token, until);
      } else {
        state.parked = { token: ticket.park.token, fencingToken: parked.fencingToken, leaseStart: ticket.sentAt, ttl: ticket.park.ttl };
        if (parked.contended && state.contendedParks++ === 0) state.contendedSince = this.host.clock.now();
      }
    }
    // Greedy means asking again after this answer, not after an earlier one.
    state.asked = false;
    if (state.recent) return;
    state.recent = true;
    setImmediate(() => this.turnOver(names.lock, state));
  }

  /**
   * A caller of the key that never takes a parked lock (a FIFO mutex, a reader) is about to ask
   * Redis: the lock parked for it is freed first (this process' own, nobody holds it), and the
   * caller's attempt, sent behind that release, finds it free or queues as usual. Else it would
   * find the lock held under the park token until the turn ends (a `tryAcquire()` answered null).
   * A parking release still on its way would park the lock just before that attempt runs: its
   * answer is returned, to wait for (once, as a barging caller does) before asking again, when
   * the lock it parked is freed here.
   */
  otherKindAsking(names: LockRedisKeys): Promise<void> | undefined {
    const state = this.keys.get(names.lock);
    if (state === undefined) return undefined;
    this.free(state);
    return state.inFlight?.answered;
  }

  /** Shutdown: frees every parked lock, and parks nothing more (`closed`). */
  close(): void {
    for (const state of this.keys.values()) this.free(state);
  }

  /** The turn in which a release came back is over: a lock nobody took is freed, and a key nobody asked for is forgotten. */
  private turnOver(lock: string, state: KeyState): void {
    state.recent = false;
    this.free(state);
    if (state.asked) return;
    state.greedy = false;
    if (state.inFlight === undefined && state.stepAside === undefined && this.keys.get(lock) === state) this.keys.delete(lock);
  }

  private free(state: KeyState): void {
    const parked = state.parked;
    if (parked === undefined) return;
    state.parked = undefined;
    this.host.unpark(state.names, parked.token, leaseEnded(parked));
  }

  /**
   * The streak is over: this release wakes the waiters, and this process' callers let one of
   * them in first. They wait from now; the `PARK_STEP_ASIDE_MS` count from the release's answer
   * (the function returned starts them): a woken waiter cannot have asked before the lock was
   * freed, and a Redis a few ms away answers after a step aside counted from the send had ended.
   */
  private stepAside(state: KeyState): () => void {
    let start!: () => void;
    let started = false;
    const stepAside: Promise<void> = new Promise((resolve) => {
      start = () => {
        if (started) return;
        started = true;
        this.host.asideClock.setTimer(
          () => {
            if (state.stepAside === stepAside) {
              state.stepAside = undefined;
              state.contendedParks = 0;
            }
            resolve();
          },
          PARK_STEP_ASIDE_MS,
          true,
        );
      };
    });
    state.stepAside = stepAside;
    // A release whose answer never comes (a connection frozen without a timeout) must not hold
    // this process' callers of the key back for ever: counted from its send, after a bound.
    // Both timers unref'd: they only hold back this process' callers, whose connection keeps it
    // alive, and app.close() cancels neither (a closed application keeps nothing alive).
    this.host.asideClock.setTimer(start, STEP_ASIDE_ANSWER_BOUND_MS, true);
    return start;
  }

  private track(names: LockRedisKeys): KeyState {
    if (this.keys.size >= MAX_KEYS) {
      const [oldest, state] = this.keys.entries().next().value!;
      this.free(state);
      this.keys.delete(oldest);
    }
    const state: KeyState = { names, greedy: false, recent: false, asked: false, inFlight: undefined, parked: undefined, contendedParks: 0, contendedSince: 0, stepAside: undefined };
    this.keys.set(names.lock, state);
    return state;
  }
}

/**
 * When a parked lease has surely ended in Redis: it started once the parking release ran, after
 * `leaseStart`, and that release may have run late when its answer never came; a holder's
 * unconfirmed release is bounded the same way (its deadline plus a ttl).
 */
function leaseEnded(parked: Pick<Parked, 'leaseStart' | 'ttl'>): number {
  return parked.leaseStart + 2 * parked.ttl;
}

/** The holder an owner token records (`<random>.<holder>.<since>`, see `HolderRecorder`). */
function holderPart(token: string): string {
  const from = token.indexOf('.');
  return from === -1 ? '' : token.slice(from, token.lastIndexOf('.'));
}

/** A fresh owner token for a parked lock, recording the same holder as the releasing `token`. */
function parkToken(token: string): string {
  const from = token.indexOf('.');
  return from === -1 ? ownerToken() : `${ownerToken()}${token.slice(from, token.lastIndexOf('.'))}.${Date.now().toString(36)}`;
}
