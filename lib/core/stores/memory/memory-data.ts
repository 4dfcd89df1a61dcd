// The keyspace of the in-memory store, shared by the mutex, the semaphore and the read side.

/** The time the in-memory store counts leases with: what `TIME` is to the Redis scripts. */
export interface StoreClock {
  now(): number;
}

/** Receives what the Redis scripts would PUBLISH: `<token>:<fencing token>` on a lock's channel. */
export type Publish = (channel: string, message: string) => void;

export interface Entry<T> {
  value: T;
  /** Clock time at which the key expires; Infinity for none. */
  expiresAt: number;
}

/** The keyspace of an in-memory store. */
export class MemoryData {
  readonly locks = new Map<string, Entry<string>>();
  readonly fences = new Map<string, Entry<number>>();
  readonly waiting = new Map<string, Entry<Queue>>();
  /** Semaphores' holder hashes (token -> `<permits>:<fencing>`) and limits (see `semaphore/`). */
  readonly semaphoreHolders = new Map<string, Map<string, string>>();
  readonly semaphoreLimits = new Map<string, number>();
  /** Read-write locks' reader hashes (`<lock>:readers`: token -> fencing token, see `rwlock/`). */
  readonly readers = new Map<string, Map<string, number>>();

  clear(): void {
    this.locks.clear();
    this.fences.clear();
    this.waiting.clear();
    this.semaphoreHolders.clear();
    this.semaphoreLimits.clear();
    this.readers.clear();
  }
}

export interface Queue {
  /** Arrival order of `<token>:<ttl>` members (the Redis list). */
  order: string[];
  /** Until when each member is known to be alive (the Redis sorted set). */
  aliveUntil: Map<string, number>;
}
