import { checkJobNamespace } from './job-namespace.js';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';
import { checkInstanceName } from '../engine/holder.js';
import { LONE_SURROGATE } from '../keys/lock-key.js';
import { parseDuration } from '../time/duration.js';
import { checkTtlWithinRetention, resolveFenceRetention } from './fence-retention.js';
import { resolveWaitForReplicas, type ReplicaWait } from './wait-for-replicas.js';
import { checkFairness } from './fairness-option.js';
import { unreadableOption } from './unreadable-option.js';
import { shownKind } from '../keys/shown-kind.js';
import type { Fairness } from '../engine/fairness.js';
import type {
  AnyLockOptions,
  LockOptions,
  LockTimingOptions,
  RedisConnection,
  RedisLockModuleOptions,
} from '../../interfaces/redis-lock-options.interface.js';

/** Node timers overflow above this many milliseconds (they would fire after 1 ms). */
export const MAX_TIMER_MS = 2_147_483_647;
export const MIN_TTL_MS = 100;
/**
 * The longest lease: a year. Leases past Node's timer limit (about 24.8 days) work because
 * every timer that waits for one is chunked (see `setLongTimeout`, `DeadlineSweeper`).
 */
export const MAX_TTL_MS = 365 * 86_400_000;
export const DEFAULT_TTL_MS = 30_000;
export const DEFAULT_WAIT_TIMEOUT_MS = 10_000;
export const DEFAULT_KEY_PREFIX = 'lock:';
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 3_000;
const MAX_KEY_PREFIX_LENGTH = 256;

/** Timing of one lock after defaults and validation. */
export interface LockTiming {
  ttl: number;
  renewInterval: number;
  waitTimeout: number;
  autoRenew: boolean;
  /** `fencing: false`: the lock is handed out without its fencing token. */
  unfenced?: true;
}

/** What a call inherits from the module: its timing, and the bound its `fenceRetention` puts on a call's ttl. */
export interface CallDefaults extends LockTiming {
  /** The module's `fenceRetention` in ms (0 or absent: counters are kept forever). */
  fenceRetention?: number;
  /** The module's `waitForReplicas.timeout` in ms, when it waits for replicas. */
  replicaWait?: number;
}

/** Module options after defaults and validation. */
export interface ResolvedModuleOptions extends LockTiming {
  redis: RedisConnection | RedisConnection[];
  keyPrefix: string;
  shutdownTimeout: number;
  exposeKeyInHttpErrors: boolean;
  instanceName?: string;
  /** Milliseconds; 0 keeps fencing counters forever. */
  fenceRetention: number;
  /** Acquisitions wait for this many replicas (Redis `WAIT`); undefined: they do not. */
  waitForReplicas?: ReplicaWait;
  /** The mutexes' default `fairness`. */
  fairness: Fairness;
}

/**
 * The safety margin subtracted from a lease: Redis expiry and our timers run on different
 * clocks, and a key may expire up to about a millisecond early. Redlock uses 1% of the ttl
 * plus 2 ms for the same reason.
 */
export function driftMargin(ttl: number): number {
  return Math.ceil(ttl * 0.01) + 2;
}

/**
 * Validates module options and fills in defaults; throws `InvalidLockOptionsError`, saying
 * `where` the options were given (`RedisLockModule.forRoot()`) when known.
 */
export function resolveModuleOptions(options: RedisLockModuleOptions, { needsRedis = true, where }: { needsRedis?: boolean; where?: string } = {}): ResolvedModuleOptions {
  try {
    return resolveModule(options, needsRedis);
  } catch (caught) {
    const error = unreadableOption(caught, options, MODULE_OPTION_NAMES);
    throw where !== undefined && error instanceof InvalidLockOptionsError && error.where === undefined ? error.within(where) : error;
  }
}

/** Where a module's options made by async code go. */
export const MODULE_OPTIONS_AWAITED = "make them in forRootAsync()'s factory, which may be async";

/** The module's options, beside the extras Nest takes off `forRoot()`'s (see `checkKnown`). */
export const MODULE_OPTION_NAMES = [
  'redis', 'keyPrefix', 'shutdownTimeout', 'fenceRetention', 'waitForReplicas', 'exposeKeyInHttpErrors', 'instanceName',
  'ttl', 'renewInterval', 'waitTimeout', 'autoRenew', 'fairness', 'jobNamespace',
] as const satisfies readonly (keyof RedisLockModuleOptions)[];
const MODULE_OPTIONS = new Set<string>(MODULE_OPTION_NAMES);
// Every option of the interface is listed: one added there and not here would be refused as unknown.
export const EVERY_MODULE_OPTION_LISTED: [Exclude<keyof RedisLockModuleOptions, (typeof MODULE_OPTION_NAMES)[number]>] extends [never] ? true : never = true;
const EXTRAS = new Set(['isGlobal', 'globalInterceptor']);

/**
 * A name that is no option (`prefix` for `keyPrefix`) would be dropped without a word, and the
 * locks land elsewhere than meant. The extras shape the module: a `forRootAsync()` factory's
 * result is read after the module was made, so they go beside `useFactory`.
 */
function checkKnown(options: object): void {
  for (const name of Object.keys(options)) {
    if (MODULE_OPTIONS.has(name)) continue;
    if (EXTRAS.has(name)) {
      throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], 'given beside useFactory in forRootAsync(), not returned by the factory (it shapes the module, which is made before the factory runs)');
    }
    throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], `left out: it is no option of the module (its options are ${[...MODULE_OPTIONS].join(', ')})`);
  }
}

function resolveModule(options: RedisLockModuleOptions, needsRedis: boolean): ResolvedModuleOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidLockOptionsError('options', options, needsRedis ? 'an object with at least a "redis" connection' : 'an object');
  }
  refuseOptionsOutOfReach(options, MODULE_OPTIONS_AWAITED);
  checkKnown(options);
  // Without Redis (the in-memory store of nestjs-redis-lock/testing) there is nothing to connect to.
  const redis = !needsRedis ? (undefined as never) : Array.isArray(options.redis) ? checkQuorum(options.redis) : checkRedis(options.redis, 'redis');
  const keyPrefix = given(options.keyPrefix, DEFAULT_KEY_PREFIX);
  // Not empty: a lock key would then start with "{", as FencedRedis' token hashes do, and a
  // lock's fencing counter `{K}:fence` would be the token hash of the data keys of tag K.
  // Well-formed: Redis gets keys as UTF-8, where a lone surrogate becomes U+FFFD, so two prefixes
  // differing only there would share every lock (as keys holding one would, see lock-key.ts).
  if (typeof keyPrefix !== 'string' || keyPrefix === '' || /[{}]/.test(keyPrefix) || keyPrefix.length > MAX_KEY_PREFIX_LENGTH || LONE_SURROGATE.test(keyPrefix)) {
    throw new InvalidLockOptionsError(
      'keyPrefix',
      keyPrefix,
      `a well-formed string (no lone surrogate) of 1 to ${MAX_KEY_PREFIX_LENGTH} characters without "{" or "}" (they are Redis Cluster hash tags; an empty prefix would give a lock's fencing counter the name of a FencedRedis token hash, {<key>}:fence)`,
    );
  }
  const shutdownTimeout = parseDuration(given(options.shutdownTimeout, DEFAULT_SHUTDOWN_TIMEOUT_MS), 'shutdownTimeout', 0, MAX_TIMER_MS);
  const exposeKeyInHttpErrors = given(options.exposeKeyInHttpErrors, false);
  if (typeof exposeKeyInHttpErrors !== 'boolean') {
    throw new InvalidLockOptionsError('exposeKeyInHttpErrors', exposeKeyInHttpErrors, 'a boolean');
  }
  const timing = resolveTiming(options, {
    ttl: DEFAULT_TTL_MS,
    renewInterval: Math.floor(DEFAULT_TTL_MS / 3),
    waitTimeout: DEFAULT_WAIT_TIMEOUT_MS,
    autoRenew: true,
  });
  const instanceName = checkInstanceName(options.instanceName);
  const fenceRetention = resolveFenceRetention(options.fenceRetention, timing.ttl);
  const waitForReplicas = resolveWaitForReplicas(options.waitForReplicas, timing.ttl, Array.isArray(redis) && redis.length > 1);
  const fairness = checkFairness(options.fairness) ?? 'fifo';
  // Checked here, before LockService connects, though the jobs read it (a refusal there came
  // after the connection was open, and left it open).
  checkJobNamespace(options.jobNamespace);
  return { ...timing, redis, keyPrefix, shutdownTimeout, exposeKeyInHttpErrors, instanceName, fenceRetention, waitForReplicas, fairness };
}

/**
 * The names one `acquire()`, `tryAcquire()` or `using()` call takes. A misspelt one (`permit` for
 * `permits`) passes TypeScript when the options are a shared constant or built in JavaScript, and
 * would be dropped without a word: a "two-permit" call would take one permit, and more holders
 * would run at once than the caller meant.
 */
export const CALL_OPTION_NAMES = ['ttl', 'renewInterval', 'waitTimeout', 'autoRenew', 'limit', 'permits', 'mode', 'fairness', 'fencing', 'signal', 'name', 'label'] as const satisfies readonly (keyof LockOptions)[];
const CALL_OPTIONS = new Set<string>(CALL_OPTION_NAMES);
// Every option of the interface is listed: one added there and not here would be refused as unknown.
export const EVERY_CALL_OPTION_LISTED: [Exclude<keyof LockOptions, (typeof CALL_OPTION_NAMES)[number]>] extends [never] ? true : never = true;

/** Validates the options of one call against the module's resolved timing. */
export function resolveLockOptions(options: AnyLockOptions | undefined, defaults: CallDefaults): LockTiming {
  if (options === undefined) return defaults;
  checkOptionsObject(options);
  // for...in: no array per call, and the engine's own marks are symbols, which it skips.
  for (const name in options) {
    if (!CALL_OPTIONS.has(name)) {
      throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], `left out: it is no option of a lock call (its options are ${CALL_OPTION_NAMES.join(', ')})`);
    }
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new InvalidLockOptionsError('signal', options.signal, 'an AbortSignal');
  }
  const timing = resolveTiming(options, defaults);
  if (options.ttl !== undefined) checkTtlWithinRetention(timing.ttl, options.ttl, defaults.fenceRetention ?? 0);
  if (options.ttl !== undefined) checkTtlOverReplicaWait(timing.ttl, options.ttl, defaults.replicaWait);
  const fencing = given(options.fencing, true);
  if (typeof fencing !== 'boolean') {
    throw new InvalidLockOptionsError('fencing', fencing, 'a boolean (false: the lock comes without a fencing token)');
  }
  return fencing ? timing : { ...timing, unfenced: true };
}

/**
 * A call's (or `@Locked`'s) options are an object: an array's indexes would be read as option
 * names, and `acquire(key, [k2])` refused as an Option "0" the caller never wrote.
 */
export function checkOptionsObject(options: unknown): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidLockOptionsError(
      'options',
      options,
      Array.isArray(options) ? 'an object of options, or left out (to lock several keys, give them all as the first argument)' : 'an object or undefined',
    );
  }
  // The call read none, and ran on the module's ttl and waitTimeout without a word.
  refuseOptionsOutOfReach(options, 'await it first');
}

/**
 * Options that are no properties: a Map's entries, a Promise's value. Read as an empty object,
 * they were dropped, or refused as the first option left out (`redis`, which was given in them).
 */
export function refuseOptionsOutOfReach(options: object, awaitIt: string): void {
  if (options instanceof Map) {
    throw new InvalidLockOptionsError('options', options, 'an object of options, not a Map (its entries are no properties: Object.fromEntries(map) makes one)');
  }
  if (typeof (options as { then?: unknown }).then === 'function') {
    throw new InvalidLockOptionsError('options', options, `an object of options, not a Promise of them: ${awaitIt}`);
  }
  if (isBuiltInValue(options)) {
    throw new InvalidLockOptionsError('options', options, `an object of options, not ${shownKind(options)} (its contents are no options)`);
  }
}

/**
 * Values whose contents live in internal slots, never options: passed for the options (a
 * variable mixed up with another), each was read as none. A class of the user's own is not
 * listed: a config class's instance with `ttl` fields is options.
 */
const BUILT_IN_VALUES = [Set, WeakMap, WeakSet, Date, RegExp, Error, ArrayBuffer] as const;

function isBuiltInValue(options: object): boolean {
  // The common case, an object literal, decided without walking the list.
  if (Object.getPrototypeOf(options) === Object.prototype) return false;
  for (const kind of BUILT_IN_VALUES) if (options instanceof kind) return true;
  return ArrayBuffer.isView(options);
}

/**
 * With `waitForReplicas` (its timeout `replicaWait`), the lease runs while the acquire waits for
 * the replicas, as the module's ttl is checked: a reply that came after the lease would be given
 * back, and the call told "busy".
 */
export function checkTtlOverReplicaWait(ttl: number, given: unknown, replicaWait: number | undefined): void {
  if (replicaWait !== undefined && ttl < 2 * replicaWait) {
    throw new InvalidLockOptionsError('ttl', given, `at least twice waitForReplicas.timeout (${replicaWait} ms): the lease runs while the acquire waits for the replicas`);
  }
}

/**
 * A ttl given without a renewInterval brings its own default interval (ttl / 3): the
 * inherited one may not even fit inside the new lease.
 */
function resolveTiming(options: LockTimingOptions, defaults: LockTiming): LockTiming {
  const ttl = parseDuration(given(options.ttl, defaults.ttl), 'ttl', MIN_TTL_MS, MAX_TTL_MS);
  // The watchdog's interval is a plain timer: it stays below Node's timer limit even for a
  // lease of a year (a renewal every 24 days is more than enough).
  const maxRenew = Math.min(ttl - driftMargin(ttl) - 1, MAX_TIMER_MS);
  const renewInterval = parseDuration(
    given(options.renewInterval, options.ttl === undefined ? defaults.renewInterval : Math.min(Math.floor(ttl / 3), MAX_TIMER_MS)),
    'renewInterval',
    1,
    maxRenew,
    ` (below ttl ${ttl} minus the drift margin)`,
  );
  const waitTimeout = given(options.waitTimeout, defaults.waitTimeout);
  const wait = waitTimeout === Infinity ? Infinity : parseDuration(waitTimeout, 'waitTimeout', 0, MAX_TIMER_MS, ', or Infinity');
  const autoRenew = given(options.autoRenew, defaults.autoRenew);
  if (typeof autoRenew !== 'boolean') {
    throw new InvalidLockOptionsError('autoRenew', autoRenew, 'a boolean');
  }
  return { ttl, renewInterval, waitTimeout: wait, autoRenew };
}

/** Only `undefined` means "not given": a `null` is a mistake worth reporting. */
function given<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

function checkQuorum(nodes: unknown[]): RedisConnection[] {
  if (nodes.length === 0) {
    throw new InvalidLockOptionsError('redis', nodes, 'a connection, or a non-empty array of independent Redis masters');
  }
  // A majority of two is both: one master down or frozen stops every lock, less available than
  // one Redis (a list that lost its third entry to an unset variable, say).
  if (nodes.length === 2) {
    throw new InvalidLockOptionsError('redis', nodes, 'a connection, or an array of 3 or 5 independent Redis masters (with 2 the majority is both, and one master down stops every lock)');
  }
  // Array.from, not map: map skips a hole (`[a, , c]`), which would pass here as a master and
  // leave a quorum of the others (two of three: a majority of both).
  const checked = Array.from(nodes, (node, i) => checkRedis(node, `redis[${i}]`));
  // Each master is one vote: the same server twice would let one failure (or one stale grant)
  // count for two. Caught here when the entries say so (one client, one address, one Sentinel's group); two clients
  // of one server are caught at startup by the servers' run ids (see quorum-servers.ts).
  const seen = new Map<unknown, number>();
  checked.forEach((node, i) => {
    const addresses = addressesOf(node);
    const shared = seen.has(node) ? undefined : addresses.find((address) => seen.has(address));
    const first = seen.get(node) ?? (shared === undefined ? undefined : seen.get(shared));
    if (first !== undefined) {
      throw new InvalidLockOptionsError(`redis[${i}]`, shared ?? 'the same client', `a Redis master other than redis[${first}] (quorum mode needs independent masters: each is one vote)`);
    }
    seen.set(node, i);
    for (const address of addresses) seen.set(address, i);
  });
  return checked;
}

/**
 * `addressOf`, or for Sentinel options the group's name at each Sentinel listed: a Sentinel
 * follows one master by a name, so two entries that share a Sentinel and the name are one master
 * (other Sentinels may use the name for another: those are told apart by `run_id`).
 */
function addressesOf(node: RedisConnection): string[] {
  const address = addressOf(node);
  if (address !== undefined) return [address];
  if (Object.getPrototypeOf(node) !== Object.prototype) return [];
  const { sentinels, name } = node as { sentinels?: unknown; name?: unknown };
  if (!Array.isArray(sentinels) || typeof name !== 'string') return [];
  return sentinels.flatMap((sentinel: unknown) => {
    if (sentinel === null || typeof sentinel !== 'object') return [];
    const { host, port } = sentinel as { host?: unknown; port?: unknown };
    return [`${name} at ${hostPort(typeof host === 'string' ? host : '', port === undefined ? '26379' : String(port))}`];
  });
}

/**
 * `host:port` of a URL or of plain connection options (no credentials, no database), the host
 * lowercased and an IPv6 address without brackets, so that one server spelled twice is one; a
 * client has none, and neither have Sentinel options (a group name, which another Sentinel
 * deployment may use for another master: the background `run_id` check tells them apart).
 */
function addressOf(node: RedisConnection): string | undefined {
  if (typeof node === 'string') {
    const url = new URL(node);
    return hostPort(url.hostname, url.port || '6379');
  }
  if (Object.getPrototypeOf(node) !== Object.prototype) return undefined;
  const { host, port, path, sentinels } = node as { host?: unknown; port?: unknown; path?: unknown; sentinels?: unknown };
  if (sentinels !== undefined) return undefined;
  if (typeof path === 'string') return path;
  return hostPort(typeof host === 'string' ? host : '', port === undefined ? '6379' : String(port));
}

/**
 * ioredis' Sentinel options (any `sentinels` but null) with no Sentinel to ask or no group name:
 * ioredis throws its own `Error` at startup, naming no option (and, in quorum mode, no entry).
 */
function checkSentinelOptions({ sentinels, name }: { sentinels?: unknown; name?: unknown }, option: string): void {
  if (sentinels === undefined || sentinels === null) return;
  if (!Array.isArray(sentinels) || sentinels.length === 0) {
    throw new InvalidLockOptionsError(`${option}.sentinels`, sentinels, 'a non-empty array of the Sentinels to ask ({ host, port } each)');
  }
  if (typeof name !== 'string' || name === '') {
    throw new InvalidLockOptionsError(`${option}.name`, name, 'the name of the master group the Sentinels follow (ioredis Sentinel options need it)');
  }
}

function isPort(port: unknown): boolean {
  const value = typeof port === 'string' && /^\d{1,5}$/.test(port) ? Number(port) : port;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65_535;
}

function hostPort(host: string, port: string): string {
  return `${host.toLowerCase().replace(/^\[(.*)\]$/, '$1') || 'localhost'}:${port}`;
}

function checkRedis(redis: unknown, option: string): RedisConnection {
  const expected =
    'a redis:// or rediss:// URL, ioredis options, an ioredis or iovalkey Redis or Cluster client, a node-redis client, cluster or Sentinel client, or a Valkey GLIDE client';
  if (typeof redis === 'string') {
    let protocol: string;
    // Shown without its credentials: the startup error goes to the logs.
    const shown = redis.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, '$1***@').replace(/([?&](?:password|pass|pwd)=)[^&#]*/gi, '$1***');
    try {
      protocol = new URL(redis).protocol;
    } catch {
      throw new InvalidLockOptionsError(option, shown, expected);
    }
    if (protocol !== 'redis:' && protocol !== 'rediss:') {
      throw new InvalidLockOptionsError(option, shown, expected);
    }
    return redis;
  }
  if (redis !== null && typeof redis === 'object' && !Array.isArray(redis)) {
    // node-redis' spelling, and many configuration modules': ioredis has no such option, ignores
    // it and connects to localhost:6379.
    // Whatever its prototype (a config class instance, a null-prototype object): only a client
    // may carry a `url` of its own.
    const client = ['defineCommand', 'sendCommand', 'invokeScript'].some((method) => typeof (redis as Record<string, unknown>)[method] === 'function');
    // Neither is ioredis options, though ioredis takes them as such: a Promise of a connection
    // (node-redis' `connect()`, an async factory's result not awaited) made it connect to
    // localhost:6379, and a WHATWG URL object failed the startup with a bare TypeError.
    if (!client && typeof (redis as { then?: unknown }).then === 'function') {
      throw new InvalidLockOptionsError(option, redis, `${expected}, not a Promise of one: await it first (forRootAsync()'s factory may be async)`);
    }
    if (redis instanceof URL) {
      throw new InvalidLockOptionsError(option, redis, 'the URL as a string (its href), not a URL object');
    }
    if (!client && 'url' in redis) {
      throw new InvalidLockOptionsError(option, redis, 'the URL itself as a string, or ioredis options without "url" (ioredis ignores it and would connect to localhost:6379)');
    }
    // ioredis takes any port and fails every command on it; in quorum mode the application then
    // starts and runs on the other masters, one failure from stopping, without a word.
    const port = client ? undefined : (redis as { port?: unknown }).port;
    if (port !== undefined && !isPort(port)) {
      throw new InvalidLockOptionsError(`${option}.port`, port, 'a TCP port, an integer from 1 to 65535 (a number or a string of digits)');
    }
    // Likewise a host that is not text: ioredis connects nowhere (or to localhost for "").
    const host = client ? undefined : (redis as { host?: unknown }).host;
    if (host !== undefined && (typeof host !== 'string' || host.length === 0)) {
      throw new InvalidLockOptionsError(`${option}.host`, host, 'a host name or IP address, as text');
    }
    if (!client) checkSentinelOptions(redis as { sentinels?: unknown; name?: unknown }, option);
    return redis as RedisConnection;
  }
  throw new InvalidLockOptionsError(option, redis, expected);
}
