import { Inject, Optional } from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants.js';
import { LeadershipService } from '../scheduling/leadership.service.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { parseDuration } from '../core/time/duration.js';
import { checkLockKey } from '../core/keys/lock-key.js';
import { quoteKey } from '../core/keys/quote-key.js';
import { shownName } from '../core/keys/shown-name.js';
import { MAX_TTL_MS, MIN_TTL_MS } from '../core/options/lock-options.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { LeaderElectionOptions } from '../interfaces/scheduling.interface.js';
import { LEADER_ELECTION_METADATA } from '../scheduling/scheduling.constants.js';

/** What `@LeaderElection` records on the class. */
export interface LeaderElectionMetadata {
  key: string;
  ttl?: number;
}

/**
 * One instance of the application at a time leads: from application bootstrap every instance
 * tries to take the lease `key` and keeps trying every ttl/3; the leader renews it. The class
 * (a singleton provider) implements `OnLeadershipAcquired` and `OnLeadershipLost`, called when
 * this instance gains and loses the lease (lost, stepped down at shutdown, or because
 * `onLeadershipAcquired` threw). The lock they get has the lease's `signal` and
 * `fencingToken`. At shutdown the signal aborts first (a `shutdown` `LockLostError`), the
 * hooks get up to `shutdownTimeout` to end, then the lease is released.
 * `LeadershipService.isLeader(key)` asks whether this instance leads.
 *
 * @example
 * ```ts
 * @Injectable()
 * @LeaderElection('price-feed', { ttl: '15s' })
 * export class PriceFeed implements OnLeadershipAcquired, OnLeadershipLost {
 *   private socket?: WebSocket;
 *   onLeadershipAcquired(lock: Lock) {
 *     this.socket = connect(FEED_URL);
 *     lock.signal.addEventListener('abort', () => this.socket?.close());
 *   }
 *   onLeadershipLost() {
 *     this.socket?.close();
 *   }
 * }
 * ```
 */
export function LeaderElection(key: string, options?: LeaderElectionOptions): ClassDecorator {
  // A class as the key (or a standard decorator's context beside it): applied without its call,
  // the decorator returned here would replace the class, and Nest fail with "metatype is not a
  // constructor".
  if (typeof key === 'function' && (options === undefined || typeof (options as { kind?: unknown }).kind === 'string')) {
    throw new RedisLockError(`@LeaderElection on ${shownName((key as { name: string }).name)} was applied without its call, and would replace the class: write @LeaderElection('<key>').`);
  }
  return (target) => {
    // A class name set at runtime is the user's text, shown as keys are (see shownName).
    const where = `@LeaderElection() on ${target.name ? shownName(target.name) : '(anonymous class)'}`;
    const metadata: LeaderElectionMetadata = { key: checkKey(key, where) };
    try {
      if (options !== undefined && (options === null || typeof options !== 'object')) {
        throw new InvalidLockOptionsError('options', options, 'an object or undefined');
      }
      // A misspelt name (`tll`) would run the election on the module's ttl without a word.
      for (const name of Object.keys(options ?? {})) {
        if (name !== 'ttl') throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], 'left out: it is no option of @LeaderElection() (its one option is ttl; the key is its first argument)');
      }
      if (options?.ttl !== undefined) metadata.ttl = parseDuration(options.ttl, 'ttl', MIN_TTL_MS, MAX_TTL_MS);
    } catch (error) {
      throw error instanceof InvalidLockOptionsError ? error.within(where) : error;
    }
    // The second would replace the first, whose election would never run; a subclass's own is its own.
    const earlier = Reflect.getOwnMetadata(LEADER_ELECTION_METADATA, target) as LeaderElectionMetadata | undefined;
    if (earlier !== undefined) {
      throw new RedisLockError(`${where}: the class already has @LeaderElection(${quoteKey(earlier.key)}); a class runs one election (give the other its own provider class).`);
    }
    Reflect.defineMetadata(LEADER_ELECTION_METADATA, metadata, target);
    watchMade(target.prototype as object);
  };
}

/** The property Nest gives a `@LeaderElection` class's instance its `LeadershipService` in (never read back). */
const LEADERSHIP_PROPERTY = Symbol('nestjs-redis-lock:LeadershipService');

/**
 * Has Nest hand every instance of the class the application's `LeadershipService` (optionally: a
 * class in a module that does not see it runs its election all the same), which then tells one
 * made too late for its election to run (see `LeadershipService.made`). Non-enumerable, as the
 * library's other properties on users' instances.
 */
function watchMade(prototype: object): void {
  if (Object.getOwnPropertyDescriptor(prototype, LEADERSHIP_PROPERTY) !== undefined) return;
  const properties: { key: string | symbol }[] = Reflect.getMetadata(PROPERTY_DEPS_METADATA, prototype.constructor) ?? [];
  if (!properties.some((property) => property.key === LEADERSHIP_PROPERTY)) {
    Inject(LeadershipService)(prototype, LEADERSHIP_PROPERTY);
    Optional()(prototype, LEADERSHIP_PROPERTY);
  }
  Object.defineProperty(prototype, LEADERSHIP_PROPERTY, {
    configurable: true,
    set(this: object, value: unknown) {
      Object.defineProperty(this, LEADERSHIP_PROPERTY, { value, writable: true, configurable: true, enumerable: false });
      const election = Reflect.getMetadata(LEADER_ELECTION_METADATA, this.constructor) as LeaderElectionMetadata | undefined;
      if (value instanceof LeadershipService && election !== undefined) value.made(this, election.key, this.constructor.name);
    },
  });
}

function checkKey(key: unknown, where: string): string {
  try {
    return checkLockKey(key, 'key');
  } catch (error) {
    if (error instanceof LockKeyError) throw new LockKeyError(`${where}: ${error.message}`);
    throw new RedisLockError(`${where}: ${(error as Error).message}`);
  }
}
