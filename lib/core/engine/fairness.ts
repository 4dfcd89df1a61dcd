/** Who gets a lock its holder gives back: the waiter at the head of the queue. */
export type Fairness = 'fifo';

/**
 * How a waiting call asks for its turn: what its attempts ask the store to do when the lock is
 * busy, given how many times a release woke it and someone else took the lock first.
 */
export interface FairnessRule {
  readonly name: Fairness;
  enqueue(lostRaces: number): boolean;
}

/** Every waiter queues, and a release hands the lock to the head of the queue. */
export const FIFO: FairnessRule = { name: 'fifo', enqueue: () => true };
