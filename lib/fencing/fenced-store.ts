import { quoteKey } from '../core/keys/quote-key.js';
import { clusterSlot } from '../core/keys/cluster-slot.js';
import { isLockPrefix, lockPrefixOf } from '../core/keys/lock-prefixes.js';
import { driverFor } from '../core/stores/redis/drivers/driver-for.js';
import type { RedisClient } from '../core/stores/redis/drivers/redis-client.js';
import { ReconnectGivenUpError, type RedisDriver } from '../core/stores/redis/drivers/redis-driver.js';
import { ReplicaWaitFailed, type ReplicaWaiter } from '../core/stores/redis/replica-wait.js';
import { settleWithin } from '../core/time/settle-within.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import { shutDownRefusal } from '../errors/shutdown-reason.js';
import { fenceHashOf, lockKeyRefusal } from './fence-key.js';
import { isNotATokenReply, notATokenError } from './kept-token.js';
import { refusedForGood, refusedForNow, unansweredRead, unconfirmedWrite, unsentBecause, unsentWrite } from './unconfirmed-write.js';
import { passes, passingReply } from '../core/engine/store-failure.js';
import { CLAIMED_GET, CLAIMED_HGET, FENCED_GET, FENCED_HGET, FENCED_HSET, FENCED_SET } from './fenced-lua.js';

/**
 * Where fenced data lives: a Redis (one server, Sentinel, Cluster; any client the module
 * accepts) or the memory of `InMemoryLocks`. `fence` is the hash of tokens of the key's tag (see
 * `fenceHashOf`). A write returns `null` when done, or the higher token kept when refused
 * (nothing written). A claimed read (a read for update) keeps `token` as the key's token and
 * returns the value, or the higher token kept when refused (nothing changed).
 */
export interface FencedStore {
  set(key: string, fence: string, token: number, value: string): Promise<string | null>;
  hset(key: string, fence: string, token: number, fields: readonly string[]): Promise<string | null>;
  get(key: string): Promise<string | null>;
  hget(key: string, field: string): Promise<string | null>;
  claimedGet(key: string, fence: string, token: number): Promise<ClaimedRead>;
  claimedHget(key: string, fence: string, token: number, field: string): Promise<ClaimedRead>;
}

/** What a claimed read came to: the value read, or the higher token that refused the claim. */
export type ClaimedRead = { value: string | null } | { refused: string };

/**
 * Fenced data in a Redis, through the client's driver (EVALSHA, EVAL on NOSCRIPT). With `replicas`
 * (the lock module's `waitForReplicas`), writes and reads for update go out on its connection and
 * are confirmed by the replicas before they resolve, as the module's acquisitions are: a claim or
 * a write the master acknowledged but a promoted replica lacks lets an older holder's write in.
 */
export class RedisFencedStore implements FencedStore {
  private readonly driver: RedisDriver;
  /** The driver of writes and claims: the replicas' connection, or the client's. */
  private readonly writer: RedisDriver;

  constructor(
    client: RedisClient,
    private readonly replicas?: ReplicaWaiter,
    /** Ends every wait for Redis (the module's store: see locks-given-back.ts). */
    private readonly ended?: AbortSignal,
  ) {
    this.driver = driverFor(client);
    this.writer = replicas?.driver ?? this.driver;
  }

  /**
   * Whether a NOSCRIPT answer may still be followed by the script's EVAL: not once `ended` (a
   * frozen server that resumes after the close answers then). The call has ended already, and
   * its lock was given back: the EVAL would write on a client handed in, from a closed
   * application, under no lock.
   */
  private readonly open = (): boolean => this.ended?.aborted !== true;

  async set(key: string, fence: string, token: number, value: string): Promise<string | null> {
    this.checkSlot(key, fence, 'set');
    return this.write('set', key, fence, token, () => this.writer.evalScript(FENCED_SET, [key, fence], [key, token, value], false, this.open));
  }

  async hset(key: string, fence: string, token: number, fields: readonly string[]): Promise<string | null> {
    this.checkSlot(key, fence, 'hset');
    return this.write('hset', key, fence, token, () => this.writer.evalScript(FENCED_HSET, [key, fence], [key, token, ...fields], false, this.open));
  }

  /**
   * A fenced write's reply. A client that sends again what a closed connection left unanswered
   * (ioredis) may have run the write once already, before that connection closed: a refusal
   * heard across such a reset may be the second run's, after a newer holder claimed the key
   * over the first run's data. That is no refusal ("nothing written") but an unknown outcome.
   */
  private async write(method: string, key: string, fence: string, token: number, send: () => Promise<unknown>): Promise<string | null> {
    const resets = this.writer.connectionResets?.();
    const refused = await this.replicated(method, key, fence, token, async () => text(await send()), (reply) => reply === null);
    if (refused === null || resets === undefined || this.writer.connectionResets!() === resets) return refused;
    throw new RedisLockError(
      `FencedRedis.${method}(): the write to ${quoteKey(key)} may have been applied: its connection was reset before the reply came and the client sent it again, ` +
        `and that second run was refused (the key has accepted fencing token ${refused}, higher than this write's ${token}). A newer holder has the key; whether this write landed before it is unknown.`,
    );
  }

  async get(key: string): Promise<string | null> {
    this.checkLockKey(key, 'get', true);
    return this.read('get', key, fenceHashOf(key, 'get'), () => this.driver.evalScript(FENCED_GET, [key], [], false, this.open));
  }

  async hget(key: string, field: string): Promise<string | null> {
    this.checkLockKey(key, 'hget', true);
    return this.read('hget', key, fenceHashOf(key, 'hget'), () => this.driver.evalScript(FENCED_HGET, [key], [field], false, this.open));
  }

  /**
   * A plain read's or `fence()`'s reply (of data key `key`, token hash `fence`). Its failure is
   * classified as a write's is (see `replicated`), but for "may have been applied": a read changes
   * nothing. Refused unsent (a closed client, a connection down under a disabled offline queue) or
   * by Redis (passing: `RedisUnavailableError`; for good, NOPERM or a renamed command: a
   * `RedisLockError` saying what to fix), or unanswered in a way that passes (a connection reset, a
   * timeout: `RedisUnavailableError`). Any other error (`WRONGTYPE ...`) is passed on as it is.
   */
  private async read(method: string, key: string, fence: string, send: () => Promise<unknown>): Promise<string | null> {
    // Asked before the call, as a write's is.
    const closed = this.driver.closed();
    return text(
      await this.answer(send(), method).catch((error: unknown) => {
        if (error instanceof RedisLockError) throw error;
        if (!closed && error instanceof ReconnectGivenUpError) throw unsentWrite(error, method, key, 'given-up', true);
        if (passingReply(error)) throw refusedForNow(error, method, key, true);
        const lasting = refusedForGood(error, method, key, fence, true);
        if (lasting !== undefined) throw lasting;
        const unsent = closed ? 'closed' : unsentBecause(error);
        if (unsent !== undefined) throw unsentWrite(error, method, key, unsent, true);
        throw passes(error) ? unansweredRead(error, method, key) : error;
      }),
    );
  }

  /**
   * `reply`, unless `ended` aborts first. A write's or a claim's wait (no `method`) then rejects
   * with an error `unconfirmedWrite` words (it may have run); a read's with the refusal.
   */
  private answer<T>(reply: Promise<T>, method?: string): Promise<T> {
    if (this.ended === undefined) return reply;
    return settleWithin(reply, Infinity, [this.ended]).catch((error: unknown) => {
      if (error !== this.ended!.reason) throw error;
      if (method === undefined) throw new Error((error as Error).message.replace(/\.$/, ''));
      throw shutDownRefusal(`FencedRedis.${method}(): ${(error as Error).message.replace(/\.$/, '')} before Redis answered.`);
    }) as Promise<T>;
  }

  async claimedGet(key: string, fence: string, token: number): Promise<ClaimedRead> {
    this.checkSlot(key, fence, 'get');
    return this.replicated('get', key, fence, token, async () => claimed(await this.writer.evalScript(CLAIMED_GET, [key, fence], [key, token], false, this.open)), isClaim);
  }

  async claimedHget(key: string, fence: string, token: number, field: string): Promise<ClaimedRead> {
    this.checkSlot(key, fence, 'hget');
    return this.replicated('hget', key, fence, token, async () => claimed(await this.writer.evalScript(CLAIMED_HGET, [key, fence], [key, token, field], false, this.open)), isClaim);
  }

  /**
   * A write's or a claim's reply, once the replicas confirmed it (with `replicas`; a refusal
   * changed nothing to confirm). One Redis did not answer may have run (see unconfirmed-write.ts). One they did not confirm is on the master only: a failover now
   * would lose it, and the promoted replica would accept an older holder's write. Not reported
   * as done, then: a read for update hands out no value to write back, and a write says so.
   */
  private async replicated<T>(method: string, key: string, fence: string, token: number, sendRaw: () => Promise<T>, changed: (reply: T) => boolean): Promise<T> {
    const send = (): Promise<T> => {
      // Asked before the call: a client closed after sending may have run it, one closed before cannot have.
      const closed = this.writer.closed();
      return this.answer(sendRaw()).catch((error: unknown) => {
        if (isNotATokenReply(error)) return Promise.reject(notATokenError(method, key, fence, error));
        // A node-redis Cluster's master connection given up: refused at once, unsent (see ReconnectGivenUpError).
        if (!closed && error instanceof ReconnectGivenUpError) return Promise.reject(unsentWrite(error, method, key, 'given-up'));
        if (passingReply(error)) return Promise.reject(refusedForNow(error, method, key));
        const lasting = refusedForGood(error, method, key, fence);
        if (lasting !== undefined) return Promise.reject(lasting);
        const unsent = closed ? 'closed' : unsentBecause(error);
        return Promise.reject(unsent === undefined ? unconfirmedWrite(error, method, key, token) : unsentWrite(error, method, key, unsent));
      });
    };
    if (this.replicas === undefined) return send();
    const { replicas, timeout } = this.replicas.required;
    const claim = method === 'get' || method === 'hget';
    const unconfirmed = (why: string, cause?: unknown): RedisLockError =>
      new RedisLockError(
        `FencedRedis.${method}(): ${claim ? `the read for update of ${quoteKey(key)} claimed it` : `the write to ${quoteKey(key)} was applied`} with fencing token ${token} on the master, ` +
          `but ${why}: a failover now could lose it, and an older holder's write would then be accepted. ` +
          `${claim ? 'Nothing was read for you to write back; read again' : 'Write again'} once the replicas are back (INFO replication on the master), or raise waitForReplicas.timeout.`,
        cause === undefined ? undefined : { cause },
      );
    // WAIT's answer too is awaited only until the close gave the locks back (see `answer`): a
    // Redis that froze after running the script would hold the close up for as long as it stays frozen.
    const { reply, reached } = await this.replicas.replicate(send, changed, (wait) => this.answer(wait)).catch((error: unknown) => {
      if (!(error instanceof ReplicaWaitFailed)) throw error;
      const reason = (error.reason instanceof Error ? error.reason.message : String(error.reason)).replace(/\.$/, '');
      throw unconfirmed(`no replica's confirmation came (waitForReplicas: WAIT ${replicas} ${timeout} failed, ${reason})`, error.reason);
    });
    if (reached === undefined || reached >= replicas) return reply;
    throw unconfirmed(`${reached} of ${replicas} replica${replicas === 1 ? '' : 's'} confirmed it within ${timeout} ms (waitForReplicas)`);
  }

  /** The token `key` has accepted, read from its token hash `fence`, under the writes' prefix check. */
  async fence(fence: string, key: string): Promise<string | null> {
    this.checkPrefix(fence, 'fence');
    return this.read('fence', key, fence, () => this.driver.evalScript(FENCED_HGET, [fence], [key], false, this.open));
  }

  /** See lock-prefixes.ts: a client whose prefix is a running lock module's keeps its token hashes under those locks' counters. */
  private checkPrefix(fence: string, method: string): void {
    const prefix = this.driver.keyPrefix;
    if (prefix === '' || !isLockPrefix(prefix)) return;
    throw new TypeError(
      `FencedRedis.${method}(): its client's keyPrefix ${quoteKey(prefix)} is where a lock module of this process keeps its keys: its token hash ${quoteKey(prefix + fence)} ` +
        "would be the fencing counter of a lock. Give FencedRedis a client without that prefix, or the module's own (inject FencedRedis).",
    );
  }

  /**
   * A data key that is a lock's own name (or a sibling's) under a lock module of this process: a
   * write there would replace the lock (or its fencing counter, its queue), and a plain read
   * (`read`) would hand out what the lock keeps there, its holder's owner token.
   */
  private checkLockKey(key: string, method: string, read: boolean): void {
    const prefix = this.driver.keyPrefix;
    const lockPrefix = lockPrefixOf(prefix + key);
    if (lockPrefix !== undefined) throw lockKeyRefusal(method, key, prefix, lockPrefix, read);
  }

  /**
   * A client `keyPrefix` is added to both names; on a Cluster it can move an untagged key to
   * another slot than its fence, which Redis would refuse with CROSSSLOT: say why instead.
   */
  private checkSlot(key: string, fence: string, method: string): void {
    this.checkPrefix(fence, method);
    this.checkLockKey(key, method, false);
    const prefix = this.driver.keyPrefix;
    if (!this.driver.isCluster) return;
    if (clusterSlot(prefix + key) !== clusterSlot(prefix + fence)) {
      throw new TypeError(
        `FencedRedis.${method}(): Argument "key" ${quoteKey(key)} with the client's keyPrefix ${quoteKey(prefix)} hashes to another Cluster slot than its fencing token; give the key a hash tag, e.g. "balance:{account-7}".`,
      );
    }
  }
}

function text(reply: unknown): string | null {
  return reply === null || reply === undefined ? null : String(reply);
}

const isClaim = (read: ClaimedRead): boolean => !('refused' in read);

/** A claimed read's reply, `{1, kept token}` or `{0, value}` (see `CLAIMED_GET`). */
function claimed(reply: unknown): ClaimedRead {
  const [code, value] = reply as [unknown, unknown];
  return Number(code) === 1 ? { refused: String(value) } : { value: text(value) };
}
