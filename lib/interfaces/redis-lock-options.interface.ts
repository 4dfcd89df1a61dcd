import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { ValkeyGlideClient } from '../core/stores/redis/drivers/glide-client.js';
import type { IoValkeyClient } from '../core/stores/redis/drivers/iovalkey-client.js';
import type { NodeRedisClient } from '../core/stores/redis/drivers/node-redis-client.js';
import type { Duration } from '../core/time/duration.js';
import type { JobModuleOptions } from './scheduling.interface.js';

export type { NodeRedisClient } from '../core/stores/redis/drivers/node-redis-client.js';
export type { IoValkeyClient } from '../core/stores/redis/drivers/iovalkey-client.js';
export type { ValkeyGlideClient } from '../core/stores/redis/drivers/glide-client.js';

export type { Duration } from '../core/time/duration.js';

/**
 * How the module reaches Redis:
 * - a URL (`redis://user:pass@host:6379/0`, `rediss://…`): the module opens and closes its
 *   own connection;
 * - ioredis options: the module opens and closes its own connection with them;
 * - an existing ioredis `Redis` or `Cluster` client: used as is and never closed by the module;
 * - an existing, connected node-redis client (`redis` v5 or v6: `createClient()`,
 *   `createCluster()` or `createSentinel()`): used as is and never closed by the module. It is
 *   recognised by its shape; `redis` is never loaded by this library;
 * - an existing iovalkey `Redis` or `Cluster` client (Valkey's fork of ioredis): used as is,
 *   through the same driver as ioredis, and never closed by the module; iovalkey is never
 *   loaded by this library;
 * - an existing Valkey GLIDE client (`@valkey/valkey-glide` 2.x: `GlideClient` or
 *   `GlideClusterClient`, as `createClient()` resolves it): used as is and never closed by the
 *   module, which opens one more GLIDE client with its configuration for release messages.
 *   GLIDE is loaded by this library only when such a client is handed in.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 *
 * const client = await createClient({ url: 'redis://localhost:6379' }).connect();
 * RedisLockModule.forRoot({ redis: client });
 * ```
 */
export type RedisConnection = string | RedisOptions | Redis | Cluster | NodeRedisClient | IoValkeyClient | ValkeyGlideClient;

/**
 * Timing of one lock. Set module-wide in {@link RedisLockModuleOptions}, override per call.
 */
export interface LockTimingOptions {
  /**
   * Lease length: how long Redis keeps the lock if the holder stops renewing it (crash,
   * network cut). Milliseconds or a duration string (`'30s'`, `'5m'`, `'30d'`), from 100 ms to
   * 365 days. Default 30000 (`'30s'`).
   */
  ttl?: Duration;
  /**
   * How often the watchdog renews the lease, in milliseconds. Must be below `ttl` minus the
   * drift margin (1% of ttl + 2 ms), and at most 2147483647 ms (about 24.8 days). Milliseconds
   * or a duration string. Default `ttl / 3`, so two renewals can fail before the lease runs out.
   */
  renewInterval?: Duration;
  /**
   * How long `acquire()` and `using()` wait for a busy lock before failing with
   * `LockNotAcquiredError`: milliseconds or a duration string (`'10s'`). `0` tries once;
   * `Infinity` waits until the lock is free or the call's `signal` aborts. Default 10000.
   */
  waitTimeout?: Duration;
  /**
   * Whether the watchdog renews the lease while the lock is held. With `false` the lock simply
   * expires after `ttl` and is then reported lost. Default `true`.
   */
  autoRenew?: boolean;
}

/**
 * Options of `RedisLockModule.forRoot()` / `forRootAsync()`.
 *
 * @example
 * ```ts
 * RedisLockModule.forRoot({ redis: 'redis://localhost:6379', ttl: 10_000, isGlobal: true })
 * ```
 */
export interface RedisLockModuleOptions extends LockTimingOptions, FairnessOptions, JobModuleOptions {
  /**
   * Where Redis is. See {@link RedisConnection} for who owns the connection. An array of
   * independent masters (3 or 5, not replicas of each other) selects quorum mode: a lock is
   * held when a majority of them granted it (the Redlock algorithm). Any number from 3 is
   * accepted; an even one buys nothing (4 masters need 3, and stand one down, as 3 do). An entry
   * may be Sentinel options or a Cluster client, one vote each: a failover there may lose grants,
   * as a master restarted empty does, and the fencing counters it rolls back are set to the
   * acquiring instance's clock, as lost ones are (quorum tokens are about that clock in
   * milliseconds; see "Fencing in quorum mode" in docs/deployment.md). An array of one
   * connection is that connection, as if given alone.
   */
  redis: RedisConnection | RedisConnection[];
  /**
   * Prefix of every Redis key and channel the library uses, so that an ACL can confine it.
   * Must not contain `{` or `}` (they are used as Redis Cluster hash tags). Default `lock:`.
   */
  keyPrefix?: string;
  /**
   * How long application shutdown waits for held locks to be released in Redis, in
   * milliseconds or as a duration string, before it closes the connection anyway (the leases
   * then expire on their own). Default 3000.
   */
  shutdownTimeout?: Duration;
  /**
   * Lets the fencing counter of a lock key expire once no token was handed out for it for this
   * many milliseconds. By default counters are kept forever: one small Redis key per distinct
   * lock key ever taken, which grows without bound when keys name entities (`order:<id>`).
   *
   * After such an idle period the key's next counter starts at the server's clock in
   * milliseconds, as every new counter does: above the old one's tokens as long as it averaged
   * fewer than 1,000 a second. Pick a retention longer than any write can stay in flight all the
   * same.
   * An integer of at least 60000 and at least `ttl`; undefined by default (kept forever).
   *
   * @example
   * ```ts
   * RedisLockModule.forRoot({ redis: url, fenceRetention: '7d' }); // a week
   * ```
   */
  fenceRetention?: Duration;
  /**
   * Makes every acquisition wait until it has reached `replicas` replicas of the master (Redis
   * `WAIT`), so that a failover to one of them keeps the lock and its fencing counter: without
   * it, replication is asynchronous and a promoted replica may lack both, hand the lock to
   * someone else and give out the same fencing token again, or a lower one. A lock handed over
   * by a release is confirmed by one more acquire call, which waits the same way. When fewer
   * replicas confirm within `timeout`, the lock is given back and the attempt fails with
   * `LockNotReplicatedError`, retried like any Redis error until `waitTimeout` (the caller
   * then gets `LockNotAcquiredError` with it as `cause`). The module's `FencedRedis` waits the
   * same way after each fenced write and read for update (a claim a promoted replica lacks lets
   * an older holder's write in), and rejects with `RedisLockError` what too few replicas confirm.
   * Costs one round trip to the replica per acquisition (see docs/benchmarks.md). For one ioredis or iovalkey connection: a server with
   * replicas, or Sentinel; refused on a Cluster (not yet supported there), in quorum mode, and
   * on node-redis and GLIDE clients; with `nestjs-redis-lock/testing` it is checked and has
   * nothing to wait for.
   *
   * @example
   * ```ts
   * RedisLockModule.forRoot({ redis: { sentinels, name: 'mymaster' }, waitForReplicas: { replicas: 1, timeout: '500ms' } });
   * ```
   */
  waitForReplicas?: WaitForReplicasOptions;
  /**
   * Whether the 409 response for a busy lock on an HTTP route names the lock key (and so the
   * errors `LockConflictInterceptor` gives GraphQL, RPC and WebSocket handlers). Keys are often
   * built from ids the client should not learn, so the default is `false`.
   */
  exposeKeyInHttpErrors?: boolean;
  /**
   * A name for this process in `inspect()` and the lock board (e.g. `"worker-3"` or the pod
   * name), recorded with every lock it takes beside the host name and pid. At most 64
   * characters.
   */
  instanceName?: string;
}

/**
 * Options that shape the module itself rather than its locks, given to `forRoot()` and beside
 * `useFactory` in `forRootAsync()` (of `RedisLockModule` and of `RedisLockTestingModule`).
 *
 * @example
 * ```ts
 * RedisLockModule.forRootAsync({ isGlobal: true, globalInterceptor: false, useFactory: () => ({ redis: url }) });
 * ```
 */
export interface RedisLockModuleExtras {
  /** Register the module's providers (`LockService`) in every module. Default `false`. */
  isGlobal?: boolean;
  /**
   * Install `LockConflictInterceptor` as a global `APP_INTERCEPTOR`, which maps a busy lock on
   * any HTTP route to 409 (503 when Redis did not answer), and the same errors of GraphQL
   * resolvers, microservice handlers and WebSocket gateways to key-free `HttpException`s. With
   * `false` the application decides: `@UseInterceptors(LockConflictInterceptor)` on the
   * controllers that want the mapping (their module must see `RedisLockModule`: import it, or
   * `isGlobal: true`). Default `true`.
   */
  globalInterceptor?: boolean;
}

/** See {@link RedisLockModuleOptions.waitForReplicas}. */
export interface WaitForReplicasOptions {
  /** How many replicas must have an acquisition before it is handed out: an integer from 1 to 100. */
  replicas: number;
  /**
   * How long `WAIT` may block, in milliseconds or as a duration string: from 1 ms to half the
   * module's `ttl` (the lease runs meanwhile). Default 1000, or half the ttl if that is less.
   */
  timeout?: Duration;
}

/** Options of one `acquire()`, `tryAcquire()` or `using()` call. */
/**
 * Makes the key a counting semaphore: at most `limit` permits held at once, waiters served in
 * arrival order. A semaphore key is separate from the mutex of the same name; use one kind
 * per key.
 *
 * @example
 * ```ts
 * // At most 3 exports at once across every instance:
 * await locks.using('export', () => runExport(), { limit: 3 });
 * // A big export takes 2 of the 3 permits:
 * await locks.using('export', () => runBigExport(), { limit: 3, permits: 2 });
 * ```
 */
export interface SemaphoreOptions {
  /**
   * How many permits the semaphore has, an integer from 1 to 1000000. Every caller of one key
   * must give the same limit: a call with another limit while the semaphore has holders or
   * waiters fails with `SemaphoreLimitError`.
   */
  limit?: number;
  /** How many permits this acquisition takes, an integer from 1 to `limit`. Default 1. Needs `limit`. */
  permits?: number;
}

/**
 * Read-write locks: readers of a key share it, a writer is alone. `'write'` is the plain
 * exclusive lock (the default), so every lock of a key excludes its readers.
 *
 * @example
 * ```ts
 * const page = await locks.using(`doc:${id}`, () => render(id), { mode: 'read' });
 * await locks.using(`doc:${id}`, () => edit(id)); // a writer: waits for the readers
 * ```
 */
export interface LockModeOptions {
  /**
   * `'read'`: shared with other readers, excluded by writers. Readers and writers wait in one
   * queue in arrival order, so a reader that arrives after a waiting writer waits behind it.
   * A write holder may take the read lock of the same key in its call chain; the reverse (an
   * upgrade) fails with `LockUpgradeError`. Default `'write'`.
   */
  mode?: 'read' | 'write';
}

/**
 * Who gets a mutex its holder gives back. Set module-wide in {@link RedisLockModuleOptions},
 * override per call (`acquire`, `tryAcquire`, `using`, `@Locked`).
 *
 * @example
 * ```ts
 * // A hot counter: many short critical sections on one key, throughput over arrival order.
 * await locks.using(`stock:${sku}`, () => decrement(sku), { fairness: 'barging' });
 * ```
 */
export interface FairnessOptions {
  /**
   * `'fifo'` (the default): waiters queue in Redis and a release hands the lock to the head of
   * the queue, so nobody is overtaken (like Redisson's `RFairLock`). `'barging'` (non-fair, like
   * Redisson's `RLock` or Go's `sync.Mutex`): a release frees the lock and publishes that it is
   * free; whoever asks first takes it, a newcomer included, and the woken waiters race for it.
   * A waiter that lost 2 such races joins the FIFO queue, which stops barging until it is
   * served, so nobody starves. While FIFO waiters queue on a key, nobody barges past them.
   * Mutexes only: a semaphore (`limit`) or a read lock (`mode: 'read'`) refuses `'barging'`
   * given per call, and ignores a module-wide one; quorum mode refuses it.
   * See docs/locks.md, "FIFO or barging".
   */
  fairness?: 'fifo' | 'barging';
}

/**
 * Whether the lock comes with a fencing token. Set per call (`acquire()`, `tryAcquire()`,
 * `using()`) or per `@Locked` method.
 *
 * @example
 * ```ts
 * // Quorum mode: a job that only one instance may run at a time, and that writes nowhere a
 * // token could be checked: one round to the masters instead of two when their counters differ.
 * await locks.using('nightly-report', () => report.run(), { fencing: false });
 * ```
 */
export interface FencingOptions {
  /**
   * `false`: the lock has no fencing token. Its `fencingToken` is `undefined` (typed so: the
   * overloads of `acquire()`, `tryAcquire()` and `using()` return an `UnfencedLock`), and
   * `FencedRedis` refuses it. In quorum mode the masters' counters are then not brought into
   * line after an acquisition that found no majority of them equal, which saves a round trip to
   * every master (the common case, where a majority granted with the same counter, costs one
   * round either way), and the acquisition ends at any granting majority; elsewhere the counter
   * is kept as usual and only not handed out. Use it for a key whose
   * holders never pass a token on; a key used both ways still hands increasing tokens to the
   * fenced holders, but an unfenced holder's writes cannot be told from a stale one's. A nested
   * call of the same chain that asks for a token cannot re-enter an unfenced lock
   * (`InvalidLockOptionsError`). Default `true`.
   */
  fencing?: boolean;
}

/**
 * Options of one `acquire()`, `tryAcquire()` or `using()` call whose lock has a fencing token
 * (`fencing` left out, or `true`). With `fencing: false` the options are
 * {@link UnfencedLockOptions} and the lock an `UnfencedLock`.
 */
export interface LockOptions extends LockTimingOptions, SemaphoreOptions, LockModeOptions, FairnessOptions {
  /** Left out or `true`: the lock comes with a fencing token. See {@link FencingOptions.fencing}. */
  fencing?: true;
  /** Cancels waiting for the lock; the call then rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * The lock's name in metrics and events: a low-cardinality name for the kind of lock, such
   * as `"order:<id>"`, never the key itself (keys hold ids; one metric series per id would
   * explode). At most 128 characters. `@Locked` methods use their key template.
   */
  name?: string;
  /**
   * What holds the lock, as `inspect()` and the lock board show it (e.g. `"nightly report"`).
   * Cut to 64 characters. Default: `name`. `@Locked` methods use `Class.method`.
   */
  label?: string;
}

/** Options of a call that takes its lock without a fencing token (see {@link FencingOptions.fencing}). */
export interface UnfencedLockOptions extends Omit<LockOptions, 'fencing'> {
  fencing: false;
}

/**
 * Options of a call where whether the lock has a fencing token is known only at run time: the
 * call then gives `Lock | UnfencedLock`.
 */
export type AnyLockOptions = LockOptions | UnfencedLockOptions;
