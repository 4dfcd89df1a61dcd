import { lockKeyRefusal } from './fence-key.js';
import type { ClaimedRead, FencedStore } from './fenced-store.js';
import { isKeptToken, notATokenError } from './kept-token.js';

/**
 * Fenced data in memory, for `nestjs-redis-lock/testing`: the same rule as the Redis scripts
 * (refuse a token lower than the one kept, keep the token with the data, equal tokens pass),
 * one `InMemoryLocks` store holding the data of every module that shares it.
 */
export class MemoryFencedStore implements FencedStore {
  private readonly strings = new Map<string, string>();
  private readonly hashes = new Map<string, Map<string, string>>();
  private readonly fences = new Map<string, Map<string, string>>();

  /**
   * @param lockPrefixOf the key prefix of a running module on this store under which `key` would
   * be one of its locks' names (`<prefix>{...`), or undefined: such a key is refused, as on Redis.
   */
  constructor(private readonly lockPrefixOf: (key: string) => string | undefined = () => undefined) {}

  set(key: string, fence: string, token: number, value: string): Promise<string | null> {
    const lockKey = this.lockKey(key, 'set');
    if (lockKey !== undefined) return Promise.reject(lockKey);
    return settle(() => {
      const refused = this.check(key, fence, token, 'set');
      if (refused === null) {
        this.hashes.delete(key); // SET replaces a key of any type
        this.strings.set(key, value);
        this.keep(key, fence, token);
      }
      return refused;
    });
  }

  hset(key: string, fence: string, token: number, fields: readonly string[]): Promise<string | null> {
    const lockKey = this.lockKey(key, 'hset');
    if (lockKey !== undefined) return Promise.reject(lockKey);
    return settle(() => {
      // The token first, as the script checks it before its HSET meets a key of another type.
      const refused = this.check(key, fence, token, 'hset');
      if (refused === null && this.strings.has(key)) throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
      if (refused === null) {
        let hash = this.hashes.get(key);
        if (hash === undefined) this.hashes.set(key, (hash = new Map()));
        for (let i = 0; i < fields.length; i += 2) hash.set(fields[i]!, fields[i + 1]!);
        this.keep(key, fence, token);
      }
      return refused;
    });
  }

  get(key: string): Promise<string | null> {
    const lockKey = this.lockKey(key, 'get', true);
    if (lockKey !== undefined) return Promise.reject(lockKey);
    return settle(() => this.stringAt(key));
  }

  hget(key: string, field: string): Promise<string | null> {
    const lockKey = this.lockKey(key, 'hget', true);
    if (lockKey !== undefined) return Promise.reject(lockKey);
    return settle(() => this.fieldAt(key, field));
  }

  claimedGet(key: string, fence: string, token: number): Promise<ClaimedRead> {
    const lockKey = this.lockKey(key, 'get');
    if (lockKey !== undefined) return Promise.reject(lockKey);
    return settle(() => this.claimed(key, fence, token, 'get', () => this.stringAt(key)));
  }

  claimedHget(key: string, fence: string, token: number, field: string): Promise<ClaimedRead> {
    const lockKey = this.lockKey(key, 'hget');
    if (lockKey !== undefined) return Promise.reject(lockKey);
    return settle(() => this.claimed(key, fence, token, 'hget', () => this.fieldAt(key, field)));
  }

  /** The refusal of a key that is a lock's own name on this store (see `lockKeyRefusal`), or undefined. */
  private lockKey(key: string, method: string, read = false): TypeError | undefined {
    const lockPrefix = this.lockPrefixOf(key);
    return lockPrefix === undefined ? undefined : lockKeyRefusal(method, key, '', lockPrefix, read);
  }

  private stringAt(key: string): string | null {
    if (this.hashes.has(key) || (this.fences.has(key) && !this.strings.has(key))) throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
    return this.strings.get(key) ?? null;
  }

  private fieldAt(key: string, field: string): string | null {
    if (this.strings.has(key)) throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
    return (this.hashes.get(key) ?? this.fences.get(key))?.get(field) ?? null;
  }

  /** In one step, as the scripts run: the check, the read (which fails on a key of another type), then the claim. */
  private claimed(key: string, fence: string, token: number, method: string, read: () => string | null): ClaimedRead {
    const refused = this.check(key, fence, token, method);
    if (refused !== null) return { refused };
    const value = read();
    this.keep(key, fence, token);
    return { value };
  }

  /** Forgets all data and tokens (`InMemoryLocks.clear()`). */
  clear(): void {
    this.strings.clear();
    this.hashes.clear();
    this.fences.clear();
  }

  /** As the scripts' check: a field that is no token is refused (see kept-token.ts), else a higher one answered. */
  private check(key: string, fence: string, token: number, method: string): string | null {
    const seen = this.fences.get(fence)?.get(key);
    if (seen === undefined) return null;
    if (!isKeptToken(seen)) throw notATokenError(method, key, fence);
    return Number(seen) > token ? seen : null;
  }

  private keep(key: string, fence: string, token: number): void {
    let hash = this.fences.get(fence);
    if (hash === undefined) this.fences.set(fence, (hash = new Map()));
    hash.set(key, String(token));
  }
}

/** A promise of what `step` returns or throws (a Redis error is a rejection, never a throw). */
function settle<T>(step: () => T): Promise<T> {
  try {
    return Promise.resolve(step());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** @internal How `FencedRedis` finds the fenced memory of an `InMemoryLocks` store. */
export const FENCED_STORE: unique symbol = Symbol('nestjs-redis-lock:fenced-store');
/** On a `FencedRedis` source: whether the connection it writes through closed with the application. */
export const FENCED_CLOSED: unique symbol = Symbol('nestjs-redis-lock:fenced-closed');
