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
  };
}

function checkKey(key: unknown, where: string): string {
  try {
    return checkLockKey(key, 'key');
  } catch (error) {
    if (error instanceof LockKeyError) throw new LockKeyError(`${where}: ${error.message}`);
    throw new RedisLockError(`${where}: ${(error as Error).message}`);
  }
}
