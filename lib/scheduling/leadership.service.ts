import { Injectable } from '@nestjs/common';
import { quoteKey } from '../core/keys/quote-key.js';
import { shownKeys } from '../core/keys/shown-keys.js';
import { shownName } from '../core/keys/shown-name.js';
import type { LockLogger } from '../core/engine/lock-logger.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { Lock } from '../interfaces/lock.interface.js';
import type { LeaderElectionRunner } from './leader-election.runner.js';

/**
 * Asks the `@LeaderElection`s of this application whether this instance leads. For work that
 * must run only on the leader but is not started by the leadership hooks, such as a
 * `@nestjs/schedule` cron: the cron fires on every instance, and returns at once on the others.
 *
 * @example
 * ```ts
 * @Injectable()
 * @LeaderElection('reports')
 * export class ReportsLeader {}
 *
 * @Injectable()
 * export class Reports {
 *   constructor(private readonly leadership: LeadershipService) {}
 *
 *   @Cron('0 0 * * * *')
 *   async hourly() {
 *     // Runs only on the leader; at app.close() the lease is given back after build() ends.
 *     await this.leadership.runAsLeader('reports', (term) => this.build({ signal: term.signal, fencingToken: term.fencingToken }));
 *   }
 * }
 * ```
 */
@Injectable()
export class LeadershipService {
  private readonly elections = new Map<string, LeaderElectionRunner>();

  /** @internal Called by the explorer when the application starts. */
  register(election: LeaderElectionRunner): void {
    this.elections.set(election.key, election);
  }

  /** Whether the application's elections were found (its modules initialised): asked before, none is known. */
  private found = false;
  /** The instances whose elections run, and the logger to warn of one made later with. */
  private elected?: { instances: WeakSet<object>; logger: LockLogger };

  /** @internal Called by the explorer once it has registered the application's elections. */
  electionsFound(instances: Iterable<object>, logger: LockLogger): void {
    this.found = true;
    this.elected = { instances: new WeakSet(instances), logger };
  }

  /**
   * @internal Nest gave a `@LeaderElection` class's instance this service. One made once the
   * elections were found is in a module loaded with `LazyModuleLoader`: Nest runs no lifecycle
   * hook there, and its election never runs; saying so as it is made is all that can be done.
   */
  made(instance: object, key: string, className: string): void {
    const elected = this.elected;
    if (elected === undefined || elected.instances.has(instance)) return;
    elected.logger.warn(
      `${shownName(className)} (@LeaderElection(${quoteKey(key)})) was made after the application started (by LazyModuleLoader, or ModuleRef.create()): Nest runs no lifecycle hook ` +
        "of a module loaded so, and the elections are found as the application's modules initialise: this one never runs (the instance never leads). " +
        'Provide the class in a module the application imports at startup.',
    );
  }

  /**
   * Whether this instance leads the election `key` now: it holds the lease, and the lease's
   * local deadline has not passed (after a stall longer than the lease, the answer is `false`
   * and the loss is reported at once, before any renewal says so).
   *
   * @throws RedisLockError when no `@LeaderElection(key)` runs in this application.
   */
  isLeader(key: string): boolean {
    return this.election(key, 'isLeader').term !== undefined;
  }

  /**
   * The lock of the current term when this instance leads `key` (its `signal` aborts when the
   * term ends, its `fencingToken` increases with every term), else `undefined`.
   *
   * @throws RedisLockError when no `@LeaderElection(key)` runs in this application.
   */
  leaderLock(key: string): Lock | undefined {
    return this.election(key, 'leaderLock').term;
  }

  /**
   * Runs `work` with the current term's lock when this instance leads `key`, and resolves to what
   * it returns; resolves `undefined` without running it when this instance does not lead (or the
   * application is shutting down). The work belongs to the term, as the election's hooks do: when
   * the term ends its `signal` aborts (and `using()` and `@Locked` calls inside it are told), and
   * at `app.close()` (or a step-down) the lease is given back only after the work has ended,
   * within `shutdownTimeout`. Work started from `leaderLock(key)` is not waited for.
   *
   * Rejects with a `RedisLockError` when no `@LeaderElection(key)` runs in this application, or
   * `work` is no function (a promise, as everything the method says goes through it), or returns
   * an Observable or a generator, whose work would run after it ended, outside the term (return
   * `lastValueFrom(observable)`).
   */
  runAsLeader<T>(key: string, work: (term: Lock) => T | PromiseLike<T>): Promise<Awaited<T> | undefined> {
    try {
      const election = this.election(key, 'runAsLeader');
      if (typeof work !== 'function') {
        throw new RedisLockError(`runAsLeader(${quoteKey(key)}, ${work === null ? 'null' : typeof work}): give the work as a function of the term's lock.`);
      }
      return election.runAsLeader(work);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  private election(key: string, method: string): LeaderElectionRunner {
    const election = typeof key === 'string' ? this.elections.get(key) : undefined;
    // From a provider's constructor: no election is known yet, and saying that none has the key
    // would send the user looking for a @LeaderElection() that is there.
    if (election === undefined && !this.found) {
      throw new RedisLockError(
        `${method}(${typeof key === 'string' ? quoteKey(key) : typeof key}): called before the application's elections were found, as its modules initialise ` +
          "(from a provider's constructor, or an onModuleInit() that ran before RedisLockModule's). Ask from onApplicationBootstrap() or later.",
      );
    }
    if (election === undefined) {
      // Bounded as a multi-key lock's keys are: an application may run an election per tenant.
      const known = shownKeys([...this.elections.keys()]);
      throw new RedisLockError(
        `${method}(${typeof key === 'string' ? quoteKey(key) : typeof key}): no @LeaderElection() with this key in this application` +
          `${known ? ` (its elections: ${known})` : ''}. Give the key of a @LeaderElection() class provided in this application.`,
      );
    }
    return election;
  }
}
