import { argumentKind, isPlainObject } from './argument-kind.js';
import { quoteKey } from '../core/keys/quote-key.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { LONE_SURROGATE } from '../core/keys/lock-key.js';
import { FencedWriteRefusedError } from '../errors/fenced-write-refused.error.js';
import type { RedisClient } from '../core/stores/redis/drivers/redis-client.js';
import type { InMemoryLocks } from '../testing/in-memory-locks.js';
import { fenceHashOf } from './fence-key.js';
import { isKeptToken, notATokenError } from './kept-token.js';
import { RedisFencedStore, type ClaimedRead, type FencedStore } from './fenced-store.js';
import { NoFencingTokenError } from '../errors/no-fencing-token.error.js';
import { FENCED_CLOSED, FENCED_STORE } from './memory-fenced-store.js';
import { shutDownRefusal } from '../errors/shutdown-reason.js';

/** A value written by `FencedRedis`: stored as Redis stores it, as a string. */
export type FencedValue = string | number;

/**
 * Writes to Redis that only the current holder of a lock can make: each write carries the
 * lock's fencing token, and one script refuses it when the resource has already accepted a
 * higher token, or writes the data and keeps the token beside it (a field of the hash
 * `{<tag>}:fence`, in the key's Cluster slot). A holder paused past its lease (GC, SIGSTOP, a
 * migrated VM) that wakes up after another instance took the lock and wrote carries a lower
 * token, so its late write is refused with `FencedWriteRefusedError` instead of overwriting the
 * newer data. Equal tokens are accepted: a reentrant holder writes with the same token as often
 * as it likes. One resource must be written under one lock key (tokens of different keys are
 * not comparable), by mutexes or write locks (a semaphore's holders each have their own token),
 * and named alike by every writer: a key's token is kept under the key as the client names it,
 * so writers through clients with different `keyPrefix`es keep two tokens for one Redis key.
 *
 * `RedisLockModule` provides one on its own connection (one server, Sentinel or Cluster, any
 * client it accepts), whose writes and reads for update wait for the replicas with the module's
 * `waitForReplicas` (a failover to a replica that lacks a claim would accept an older holder's
 * write); `RedisLockTestingModule` one in memory. For data on another Redis, or in quorum mode,
 * make one with `new FencedRedis(client)`.
 *
 * @example
 * ```ts
 * await locks.using(`account:${id}`, async (lock) => {
 *   // A read for update: it claims the key with the token, so that an older holder's late write
 *   // cannot land between this read and the write below.
 *   const balance = Number(await fenced.get(`balance:{${id}}`, lock.fencingToken));
 *   await fenced.set(`balance:{${id}}`, balance + amount, lock.fencingToken);
 * });
 * ```
 */
export class FencedRedis {
  private resolved?: FencedStore;

  /**
   * @param source a client the module accepts (ioredis or iovalkey `Redis`/`Cluster`, a connected
   * node-redis client, a Valkey GLIDE client), which stays the caller's to close; or an
   * `InMemoryLocks` store, whose memory keeps the data.
   */
  constructor(private readonly source: RedisClient | InMemoryLocks) {
    if (source === null || typeof source !== 'object') {
      throw new TypeError(`new FencedRedis(): Argument "source" must be an ioredis, iovalkey, node-redis or Valkey GLIDE client, or an InMemoryLocks store, got ${source === null ? 'null' : typeof source}.`);
    }
    // A client given here is checked here, not at the first write, and the refusal names this
    // argument (the driver's own names the lock module's option).
    if (typeof (source as unknown as Record<PropertyKey, unknown>)[FENCED_STORE] !== 'function') {
      try {
        this.resolved = new RedisFencedStore(source as RedisClient);
      } catch (error) {
        const reason = error instanceof InvalidLockOptionsError ? error.message.replace(/^Option "[^"]*" must be /, 'must be ') : 'must be an ioredis, iovalkey, node-redis or Valkey GLIDE client, or an InMemoryLocks store, got an object that is none of them.';
        throw new TypeError(`new FencedRedis(): Argument "source" ${reason}`);
      }
    }
  }

  /**
   * `SET key value`, if `fencingToken` is not lower than the highest token `key` has accepted;
   * keeps `fencingToken` as that token.
   *
   * @throws FencedWriteRefusedError when `key` has accepted a higher token (nothing written).
   * @throws RedisLockError when the refusal came from a second run of the write that the client
   * (ioredis) sent again after its connection was reset: the first run may have written; and
   * when Redis did not answer the write (node-redis' or GLIDE's connection dropped, a client's
   * timeout): it may have been applied (the client's error is the `cause`).
   * @throws RedisLockError with the module's `waitForReplicas`, when fewer replicas confirmed the
   * write in time: it is on the master only, and a failover could lose it.
   * @throws RedisLockError when Redis refused the call for good (NOPERM, OOM, EVALSHA or EVAL
   * renamed): nothing was written; the message says what to fix.
   * @example
   * ```ts
   * await fenced.set('report:{daily}', JSON.stringify(report), lock.fencingToken);
   * ```
   */
  async set(key: string, value: FencedValue, fencingToken: number): Promise<void> {
    const fence = fenceHashOf(key, 'set');
    checkToken(fencingToken, 'set', key);
    const refused = await this.store('set').set(key, fence, fencingToken, valueOf(value, 'set', '"value"'));
    if (refused !== null) throw new FencedWriteRefusedError(key, fencingToken, Number(refused));
  }

  /**
   * `HSET key field value [field value ...]`, if `fencingToken` is not lower than the highest
   * token the hash `key` has accepted: the hash is one resource (as a row is), with one token.
   * `fields` is a plain object (an object literal, or `Object.create(null)`), typed by an interface
   * or not; a class instance is refused with a `TypeError`, since getters of its class would not be
   * written: pass its fields, `{ ...dto }`.
   *
   * @throws FencedWriteRefusedError when `key` has accepted a higher token (nothing written).
   * @throws RedisLockError when the refusal came from a second run of the write that the client
   * (ioredis) sent again after its connection was reset: the first run may have written; and
   * when Redis did not answer the write (node-redis' or GLIDE's connection dropped, a client's
   * timeout): it may have been applied (the client's error is the `cause`).
   * @throws RedisLockError with the module's `waitForReplicas`, when fewer replicas confirmed the
   * write in time: it is on the master only, and a failover could lose it.
   * @throws RedisLockError when Redis refused the call for good (NOPERM, OOM, EVALSHA or EVAL
   * renamed): nothing was written; the message says what to fix.
   * @example
   * ```ts
   * await fenced.hset(`account:{${id}}`, 'balance', 120, lock.fencingToken);
   * await fenced.hset(`account:{${id}}`, { balance: 120, updatedBy: 'api-2' }, lock.fencingToken);
   * ```
   */
  hset(key: string, field: string, value: FencedValue, fencingToken: number): Promise<void>;
  // Typed by its fields, so that an interface (which has no index signature) passes as an object
  // literal type does; an array, whose entries are no fields, does not.
  hset<Fields extends { readonly [Field in keyof Fields]: FencedValue } & object>(key: string, fields: Fields extends readonly unknown[] ? never : Fields, fencingToken: number): Promise<void>;
  async hset(key: string, fieldOrFields: string | Readonly<Record<string, FencedValue>>, valueOrToken: FencedValue, maybeToken?: number): Promise<void> {
    const fence = fenceHashOf(key, 'hset');
    const single = typeof fieldOrFields === 'string';
    // The form goes by the second argument: a field name, or an object of fields. Anything else
    // is that argument's mistake, whatever follows it.
    if (!single && !isPlainObject(fieldOrFields)) {
      // A class instance with fields of its own (a DTO): its fields, spread, are what to pass.
      const instance = typeof fieldOrFields === 'object' && fieldOrFields !== null && !Array.isArray(fieldOrFields) && !ArrayBuffer.isView(fieldOrFields) && Object.keys(fieldOrFields).length > 0;
      throw new TypeError(
        `FencedRedis.hset(): Argument "field" must be a field name (a string), or "fields" an object of fields, got ${argumentKind(fieldOrFields)}${instance ? ' (pass its fields as a plain object: { ...value })' : ''}.`,
      );
    }
    const fencingToken = (single ? maybeToken : valueOrToken) as number;
    checkToken(fencingToken, 'hset', key);
    const pairs: string[] = [];
    if (single) pairs.push(wellFormed(fieldOrFields, 'hset', '"field"'), valueOf(valueOrToken, 'hset', '"value"'));
    else for (const [field, value] of Object.entries(fieldOrFields)) pairs.push(wellFormed(field, 'hset', `"fields" (field ${quoteKey(field)})`), valueOf(value, 'hset', `fields[${quoteKey(field)}]`));
    if (pairs.length === 0) throw new TypeError('FencedRedis.hset(): Argument "fields" must be a field name or an object with at least one field, got an empty object.');
    const refused = await this.store('hset').hset(key, fence, fencingToken, pairs);
    if (refused !== null) throw new FencedWriteRefusedError(key, fencingToken, Number(refused));
  }

  /**
   * `GET key`: without `fencingToken`, a plain read, for data this class wrote (and in memory,
   * the only way to read it). With `fencingToken`, a read for update (the read of a
   * read-modify-write under a lock): it claims `key` as a write would, keeping `fencingToken` as
   * its token, so that an older holder's write landing between this read and this holder's own
   * write is refused instead of being overwritten by a value computed without it (a lost update).
   *
   * @throws FencedWriteRefusedError (`operation` `'read'`) when `fencingToken` is given and `key`
   * has accepted a higher token (nothing read, nothing changed).
   * @throws RedisLockError with the module's `waitForReplicas`, when fewer replicas confirmed the
   * claim in time (it is on the master only; nothing read); and when Redis did not answer the
   * read for update (a connection dropped, a timeout): it may have claimed `key` (nothing read).
   * @throws RedisLockError when Redis refused the read for update for good (NOPERM, OOM, EVALSHA
   * or EVAL renamed): nothing was claimed or read; the message says what to fix. A plain read so
   * refused (NOPERM, EVALSHA or EVAL renamed) rejects alike.
   * @throws RedisUnavailableError when Redis refused the call for now (LOADING, BUSY, a
   * failover's READONLY): nothing was claimed or read.
   * @example
   * ```ts
   * const report = await fenced.get('report:{daily}');
   * const count = Number(await fenced.get('visits:{daily}', lock.fencingToken));
   * await fenced.set('visits:{daily}', count + 1, lock.fencingToken);
   * ```
   */
  get(key: string): Promise<string | null>;
  get(key: string, fencingToken: number): Promise<string | null>;
  async get(key: string, ...claim: [fencingToken?: number]): Promise<string | null> {
    const fence = fenceHashOf(key, 'get');
    // The argument's presence, not its value: `lock.fencingToken` of a lock without fencing is
    // undefined, and must fail as a write's does rather than read without a claim.
    if (claim.length === 0) return this.store('get').get(key);
    const [fencingToken] = claim;
    checkToken(fencingToken, 'get', key);
    return readOrRefuse(key, fencingToken, await this.store('get').claimedGet(key, fence, fencingToken));
  }

  /**
   * `HGET key field`; with `fencingToken`, a read for update that claims the hash `key` (see `get`).
   *
   * @throws FencedWriteRefusedError (`operation` `'read'`) when `fencingToken` is given and `key`
   * has accepted a higher token (nothing read, nothing changed).
   * @throws RedisLockError with the module's `waitForReplicas`, when fewer replicas confirmed the
   * claim in time (it is on the master only; nothing read); and when Redis did not answer the
   * read for update (a connection dropped, a timeout): it may have claimed `key` (nothing read).
   * @throws RedisLockError when Redis refused the read for update for good (NOPERM, OOM, EVALSHA
   * or EVAL renamed): nothing was claimed or read; the message says what to fix. A plain read so
   * refused rejects alike (a `RedisUnavailableError` when refused for now: LOADING, BUSY).
   * @example
   * ```ts
   * const balance = Number(await fenced.hget(`account:{${id}}`, 'balance', lock.fencingToken));
   * await fenced.hset(`account:{${id}}`, 'balance', balance + amount, lock.fencingToken);
   * ```
   */
  hget(key: string, field: string): Promise<string | null>;
  hget(key: string, field: string, fencingToken: number): Promise<string | null>;
  async hget(key: string, field: string, ...claim: [fencingToken?: number]): Promise<string | null> {
    const fence = fenceHashOf(key, 'hget');
    if (typeof field !== 'string') throw new TypeError(`FencedRedis.hget(): Argument "field" must be a string, got ${argumentKind(field)}.`);
    wellFormed(field, 'hget', '"field"');
    if (claim.length === 0) return this.store('hget').hget(key, field);
    const [fencingToken] = claim;
    checkToken(fencingToken, 'hget', key);
    return readOrRefuse(key, fencingToken, await this.store('hget').claimedHget(key, fence, fencingToken, field));
  }

  /**
   * The highest fencing token `key` has accepted, or `null` before its first fenced write or
   * read for update.
   *
   * @throws RedisLockError when Redis refused the read for good (NOPERM, EVALSHA or EVAL
   * renamed); the message says what to fix. A `RedisUnavailableError` when it refused it for now
   * (LOADING, BUSY).
   *
   * @example
   * ```ts
   * await fenced.fence('report:{daily}'); // 42
   * ```
   */
  async fence(key: string): Promise<number | null> {
    // The key first: a bad one is named as such, whatever the store.
    const fence = fenceHashOf(key, 'fence');
    const store = this.store('fence');
    const token = await (store instanceof RedisFencedStore ? store.fence(fence, key) : store.hget(fence, key));
    if (token === null) return null;
    if (!isKeptToken(token)) throw notATokenError('fence', key, fence);
    return Number(token);
  }

  private store(method: string): FencedStore {
    // The module's: its connection closes with the application, after which the client's own
    // error would name neither this class nor why; and from the moment its locks were given back
    // a call Redis left unanswered would hold that close up (see locks-given-back.ts).
    const closed = (this.source as unknown as Record<PropertyKey, unknown>)[FENCED_CLOSED];
    if (typeof closed === 'function' && closed() === true) {
      throw shutDownRefusal(`FencedRedis.${method}(): the application has shut down, and with it the lock module this FencedRedis writes through (its locks given back, its connection closed or about to be, or a client handed in about to be).`);
    }
    if (this.resolved !== undefined) return this.resolved;
    // InMemoryLocks, or the module's connection (see fenced-redis.provider.ts), found when first used.
    const source = this.source as unknown as Record<PropertyKey, unknown>;
    if (typeof source[FENCED_STORE] === 'function') this.resolved = (source[FENCED_STORE] as () => FencedStore).call(source);
    else this.resolved = new RedisFencedStore(this.source as RedisClient);
    return this.resolved;
  }
}

/**
 * Refuses a token no lock hands out, naming the call's data key (quoted and cut, as every key in a
 * message is): a route writing several keys under several locks logs which write it was.
 */
function checkToken(token: unknown, method: string, key: string): asserts token is number {
  const argument = `Argument "fencingToken" of the ${method === 'get' || method === 'hget' ? 'read for update of' : 'write to'} ${quoteKey(key)}`;
  if (token === undefined) {
    throw new NoFencingTokenError(
      undefined,
      `FencedRedis.${method}(): ${argument} must be a lock's fencing token (a positive integer, lock.fencingToken), got undefined: a lock taken with fencing: false has none (take it without that option to ${method === 'get' || method === 'hget' ? 'read for update' : 'write'} through FencedRedis), and lock.fencingTokens has none for a key the lock does not hold (use a key of the lock).`,
    );
  }
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token < 1) {
    throw new TypeError(`FencedRedis.${method}(): ${argument} must be a lock's fencing token (a positive integer, lock.fencingToken), got ${argumentKind(token)}.`);
  }
}

/** A claimed read's value, or the refusal of its claim. */
function readOrRefuse(key: string, fencingToken: number, read: ClaimedRead): string | null {
  if ('refused' in read) throw new FencedWriteRefusedError(key, fencingToken, Number(read.refused), 'read');
  return read.value;
}

function valueOf(value: unknown, method: string, name: string): string {
  if (typeof value === 'string') return wellFormed(value, method, name);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new TypeError(`FencedRedis.${method}(): Argument ${name} must be a string or a finite number, got ${argumentKind(value)}.`);
}

/**
 * A field name or value as Redis stores it: a lone surrogate goes over the wire as U+FFFD, so two
 * such field names would be one field in Redis and two in memory, and a value would read back
 * otherwise. Refused, as such keys are (see `fenceHashOf`).
 */
function wellFormed(text: string, method: string, name: string): string {
  if (!LONE_SURROGATE.test(text)) return text;
  throw new TypeError(
    `FencedRedis.${method}(): Argument ${name} is not well-formed Unicode (a lone surrogate, as an emoji cut in half leaves): Redis would store it as U+FFFD. Use String.prototype.toWellFormed().`,
  );
}
