import type { Enqueue } from '../stores/lock-store.js';

/**
 * Who gets a lock its holder gives back: the waiter at the head of the queue (`fifo`), or
 * whoever asks first (`barging`; see docs/locks.md, "FIFO or barging").
 */
export type Fairness = 'fifo' | 'barging';

/**
 * How a waiting call asks for its turn: what its attempts ask the store to do when the lock is
 * busy (see `Enqueue`), given how many times a release woke it and someone else took the lock
 * first.
 */
export interface FairnessRule {
  readonly name: Fairness;
  enqueue(lostRaces: number): Enqueue;
  /**
   * Whether a waiter that got the lock wakes the next waiter of its process (see
   * `ReleaseWatch.passOn`): barging releases publish only to waiters that said they wait since
   * the last message.
   */
  readonly passesOn: boolean;
  /** Whether a process that takes a mutex of this rule again at once may park it (see `LockParking`). */
  readonly parks: boolean;
}

/** Every waiter queues, and a release hands the lock to the head of the queue. */
export const FIFO: FairnessRule = { name: 'fifo', enqueue: () => true, passesOn: false, parks: false };

/**
 * A barging waiter that lost this many races for a freed lock queues like a FIFO waiter: while
 * anyone queues, nobody barges, and the next release hands the lock to it (Go's `sync.Mutex`
 * switches to hand-off for a waiter starved past 1 ms for the same reason). Counted in races,
 * not time: a waiter is overtaken at most this many times in a row.
 */
export const BARGING_RACES_BEFORE_QUEUE = 2;

/** A waiter only says that it waits; a release frees the lock and wakes waiters to race for it. */
export const BARGING: FairnessRule = {
  name: 'barging',
  enqueue: (lostRaces) => (lostRaces >= BARGING_RACES_BEFORE_QUEUE ? true : 'barging'),
  passesOn: true,
  parks: true,
};
