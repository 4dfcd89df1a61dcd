import { systemClock, type Clock } from '../core/time/clock.js';
import type { LockBackend } from '../core/engine/lock-backend.js';
import { lockRedisKeys } from '../core/keys/lock-key.js';
import { quoteKey } from '../core/keys/quote-key.js';
import { DEFAULT_KEY_PREFIX, type ResolvedModuleOptions } from '../core/options/lock-options.js';
import { FENCED_STORE, MemoryFencedStore } from '../fencing/memory-fenced-store.js';
import { MemoryNotifier } from '../core/stores/memory/memory-notifier.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { LockKeyError } from '../errors/lock-key.error.js';
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
  /** The key prefixes of the modules that used this store, to find a user's key under each. */
  private readonly prefixes = new Set<string>();
  /** The key prefixes of the modules running on this store now, with how many run under each. */
  private readonly running = new Map<string, number>();
  /** FencedRedis data; a key that is a lock's own name under a running module's prefix is refused, as on Redis. */
  private readonly fenced = new MemoryFencedStore((key) => {
    for (const prefix of this.running.keys()) if (key.startsWith(prefix + '{')) return prefix;
    return undefined;
  });

  constructor(options: InMemoryLocksOptions = {}) {
    this.clock = clockOf(options) === 'manual' ? new ManualClock() : systemClock;
  }

  /**
   * The manual clock, to `advance()`; throws when this store runs on the system clock.
   *
   * @example
   * ```ts
   * const locks = new InMemoryLocks({ clock: 'manual' });
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

  /**
   * Takes the lock of `key` away from whoever holds it, as an operator's `DEL` or an eviction
   * would in Redis: every holder of the key (a mutex or writer, readers, a semaphore's
   * permits) learns it at its next renewal, and the key is free: the next caller gets it at once
   * when nobody waits, as on Redis; waiters queued for it stay, and the first of them gets it
   * when its poll or the next release hands it on (FIFO). Fencing counters stay. `key` is the key as it was locked (`'order:1'`), under the key
   * prefix of every module that used this store; the internal form (`'lock:{order:1}'`) is
   * taken too. Throws `LockKeyError` when nothing is held under the key, so that a test of a
   * stolen lock cannot pass without stealing one.
   *
   * @example
   * ```ts
   * const lock = await locks.acquire('order:1');
   * store.delete('order:1');
   * await store.manualClock.advance('10s'); // the next renewal is refused
   * expect(lock.signal.aborted).toBe(true);
   * ```
   */
  delete(key: string): void {
    if (typeof key !== 'string' || key.length === 0) {
      throw new LockKeyError(`InMemoryLocks.delete(key): the key must be a non-empty string, got ${typeof key === 'string' ? 'an empty string' : key === null ? 'null' : typeof key}.`);
    }
    const prefixes = this.prefixes.size > 0 ? this.prefixes : [DEFAULT_KEY_PREFIX];
    const names = new Set([...prefixes].map((prefix) => lockRedisKeys(prefix, key).lock));
    names.add(key);
    const now = this.clock.now();
    let deleted = false;
    for (const name of names) if (this.deleteHolders(name, now)) deleted = true;
    if (!deleted) {
      throw new LockKeyError(`InMemoryLocks.delete(key): no lock is held on ${quoteKey(key)}. Give the key as it was locked (e.g. 'order:1').`);
    }
  }

  /** Deletes the lock named `name` and its readers' and permits' keys; whether any was live. */
  private deleteHolders(name: string, now: number): boolean {
    const live = (lockName: string): boolean => {
      const entry = this.data.locks.get(lockName);
      this.data.locks.delete(lockName);
      return entry !== undefined && entry.expiresAt >= now;
    };
    let deleted = live(name);
    const readers = `${name}:readers`;
    for (const token of this.data.readers.get(readers)?.value.keys() ?? []) if (live(`${name}:reader:${token}`)) deleted = true;
    this.data.readers.delete(readers);
    const holders = `${name}:holders`;
    for (const token of this.data.semaphoreHolders.get(holders)?.value.keys() ?? []) if (live(`${name}:permit:${token}`)) deleted = true;
    this.data.semaphoreHolders.delete(holders);
    return deleted;
  }

  /** @internal The backend of one application's `LockService`. */
  backend(options: ResolvedModuleOptions): LockBackend {
    this.prefixes.add(options.keyPrefix);
    const prefix = options.keyPrefix;
    this.running.set(prefix, (this.running.get(prefix) ?? 0) + 1);
    let running = true;
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
        if (!running) return;
        running = false;
        const left = (this.running.get(prefix) ?? 1) - 1;
        if (left > 0) this.running.set(prefix, left);
        else this.running.delete(prefix);
      },
    };
  }
}

/**
 * The clock the options ask for. A misspelt one (`'Manual'`, `clok`) would give a store on real
 * time, and a test's waits and leases would take real time without a word.
 */
function clockOf(options: InMemoryLocksOptions): 'system' | 'manual' {
  const where = 'new InMemoryLocks()';
  if (options === null || typeof options !== 'object') throw new InvalidLockOptionsError('options', options, "an object such as { clock: 'manual' }").within(where);
  for (const name of Object.keys(options)) {
    if (name !== 'clock') throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], 'left out: it is no option of InMemoryLocks (its one option is clock)').within(where);
  }
  const { clock = 'system' } = options;
  if (clock !== 'system' && clock !== 'manual') throw new InvalidLockOptionsError('clock', clock, "'system' or 'manual'").within(where);
  return clock;
}
