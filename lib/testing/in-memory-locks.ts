import { systemClock, type Clock } from '../core/time/clock.js';
import type { LockBackend } from '../core/engine/lock-backend.js';
import type { ResolvedModuleOptions } from '../core/options/lock-options.js';
import { FENCED_STORE, MemoryFencedStore } from '../fencing/memory-fenced-store.js';
import { MemoryNotifier } from '../core/stores/memory/memory-notifier.js';
import { MemoryData, MemoryStore } from '../core/stores/memory/memory-store.js';
import { ManualClock } from './manual-clock.js';

/** Options of {@link InMemoryLocks}. */
export interface InMemoryLocksOptions {
  /**
   * `'system'` (default): leases and waits take real time. `'manual'`: time moves only with
   * `clock.advance()`.
   */
  clock?: 'system' | 'manual';
}

/**
 * An in-memory lock store: what a Redis server is to applications that lock on it, inside one
 * process. Every `RedisLockTestingModule` given the same instance shares its locks, as
 * application instances on one Redis do. It keeps the protocol of the Redis scripts: FIFO
 * waiting with handoff, leases that expire, fencing tokens, renewals refused once a lock is
 * gone. A lock in memory excludes callers of this process only: it is for tests, and for
 * running without Redis on one machine.
 *
 * @example
 * ```ts
 * const locks = new InMemoryLocks({ clock: 'manual' });
 * const moduleRef = await Test.createTestingModule({
 *   imports: [RedisLockTestingModule.forRoot({ locks, ttl: '10s' }), OrdersModule],
 * }).compile();
 * await locks.manualClock.advance('10s');
 * ```
 */
export class InMemoryLocks {
  /** The store every testing module uses unless given its own. */
  static readonly shared = new InMemoryLocks();

  /** The clock leases are counted on; with `clock: 'manual'`, a `ManualClock` (see `manualClock`). */
  readonly clock: Clock;
  private readonly data = new MemoryData();
  private readonly notifiers = new Set<MemoryNotifier>();
  private readonly fenced = new MemoryFencedStore();

  constructor(options: InMemoryLocksOptions = {}) {
    this.clock = options.clock === 'manual' ? new ManualClock() : systemClock;
  }

  /**
   * The manual clock, to `advance()`; throws when this store runs on the system clock.
   *
   * @example
   * ```ts
   * await locks.manualClock.advance('31s');
   * ```
   */
  get manualClock(): ManualClock {
    if (!(this.clock instanceof ManualClock)) {
      throw new TypeError("InMemoryLocks.manualClock: this store runs on the system clock; create it with new InMemoryLocks({ clock: 'manual' }).");
    }
    return this.clock;
  }

  /** Forgets every lock, fencing counter and queue, and the data of `FencedRedis` (between tests that share the store). */
  clear(): void {
    this.data.clear();
    this.fenced.clear();
  }

  /** @internal Where `FencedRedis` keeps data written through this store. */
  [FENCED_STORE](): MemoryFencedStore {
    return this.fenced;
  }

  /** Deletes a lock whoever holds it, as an operator or an eviction would in Redis. */
  delete(prefixedKey: string): void {
    this.data.locks.delete(prefixedKey);
  }

  /** @internal The backend of one application's `LockService`. */
  backend(options: ResolvedModuleOptions): LockBackend {
    const notifier = new MemoryNotifier();
    this.notifiers.add(notifier);
    const publish = (channel: string, message: string): void => {
      for (const each of this.notifiers) each.receive(channel, message);
    };
    return {
      store: new MemoryStore(this.data, this.clock, publish, options.fenceRetention),
      notifier,
      clients: [],
      clock: this.clock,
      close: () => {
        notifier.close();
        this.notifiers.delete(notifier);
      },
    };
  }
}
