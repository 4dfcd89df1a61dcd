import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { AnyLockOptions } from '../interfaces/redis-lock-options.interface.js';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { checkTtlOverReplicaWait, MAX_TTL_MS, MIN_TTL_MS, resolveModuleOptions } from '../core/options/lock-options.js';
import { parseDuration } from '../core/time/duration.js';
import { checkTtlWithinRetention } from '../core/options/fence-retention.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import type { LeaderElectionMetadata } from '../decorators/leader-election.decorator.js';
import { DuplicateLockKeyError } from '../errors/duplicate-lock-key.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { RedisLockModuleOptions } from '../interfaces/redis-lock-options.interface.js';
import { LockService } from '../lock.service.js';
import { REDIS_LOCK_MODULE_OPTIONS } from '../redis-lock.module-definition.js';
import { jobClaims, jobDecorators, jobTtl, type JobBinding, type JobSpec } from './job-spec.js';
import { shownName } from '../core/keys/shown-name.js';
import { JobLockOrchestrator } from './job-lock.orchestrator.js';
import { LeadershipService } from './leadership.service.js';
import { LOCK_RUNNER, LOCK_SERVICE_PROPERTY, LOCKED_METADATA, NOT_A_LOCK_SERVICE } from '../redis-lock.constants.js';
import type { LockManager } from '../core/engine/lock-manager.js';
import { lockedMethodScheduled } from '../core/engine/locked-call.js';
import { quoteKey } from '../core/keys/quote-key.js';
import { checkLockKey } from '../core/keys/lock-key.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { LeaderElectionRunner } from './leader-election.runner.js';
import { equipScopedFactory } from './scoped-factory-instances.js';
import { checkScheduledReturn, scheduleOf, schedulingIn } from './schedule-metadata.js';
import { lockServiceSeenBy } from './lock-service-seen.js';
import { JOB_LOCK_METADATA, JOB_ORCHESTRATOR_PROPERTY, LEADER_ELECTION_METADATA } from './scheduling.constants.js';

interface Claim {
  by: string;
  /** The (provider instance, job) or election that made it: one owner may claim two keys. */
  owner: object;
  /** The provider class: the same class twice is fixed by providing it once, not by a key. */
  type: object;
  /**
   * The job (its spec) or election (its metadata) of the class: two of one class provided once
   * (two methods given one key) are fixed by a key, not by providing the class once.
   */
  what: object;
  /** The module that provides it, to tell apart two classes of one name. */
  module: string | undefined;
}

/** The remedy when the two claims come from one class provided twice. */
const PROVIDED_TWICE = 'Provide the class once (a second token can name the same instance with useExisting).';

/** A class name a minifier may have made: the default key built from it may change between builds. */
const MINIFIED_NAME = /^[A-Za-z_$][A-Za-z0-9_$]?$/;

/**
 * Finds the job methods and `@LeaderElection` classes of the application when its modules
 * initialise, fails the startup if two of them would share a Redis lock, and runs the
 * elections from application bootstrap until the modules are destroyed.
 *
 * The rules for keys: a job's default key is `ClassName.methodName` with the provider's class
 * (a subclass that inherits a job method gets a key of its own), after the module's
 * `jobNamespace`. Startup fails with `DuplicateLockKeyError` when two jobs or elections would
 * use one lock: the same key (a key given explicitly on a method two provided classes inherit
 * included), a key equal to another's `<key>:owner` lease, or one class with job methods
 * provided twice (two instances under two tokens; one instance under two tokens is fine). It
 * warns about a default key built from a class name that looks minified.
 */
/** The explorer that runs an application's jobs and elections, by the application's `DiscoveryService` (one per application). */
const RUNNING = new WeakMap<DiscoveryService, LockSchedulingExplorer>();
/** Every explorer of an application (one per RedisLockModule instance), closed together when one refuses the startup. */
const ALL = new WeakMap<DiscoveryService, Set<LockSchedulingExplorer>>();

@Injectable()
export class LockSchedulingExplorer implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly elections: LeaderElectionRunner[] = [];
  private shutdownTimeout = 0;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(LockService) private readonly locks: LockService,
    @Inject(REDIS_LOCK_MODULE_OPTIONS) private readonly options: RedisLockModuleOptions,
    @Inject(JobLockOrchestrator) private readonly jobs: JobLockOrchestrator,
    @Inject(LeadershipService) private readonly leadership: LeadershipService,
  ) {
    const all = ALL.get(discovery) ?? new Set<LockSchedulingExplorer>();
    all.add(this);
    ALL.set(discovery, all);
  }

  onModuleInit(): void {
    try {
      // A test's fake (`overrideProvider(LockService).useValue(...)`) has no engine to run jobs,
      // elections and @Locked methods on: said here, not as a TypeError from reading it.
      if (!(this.locks instanceof LockService)) throw new RedisLockError(`RedisLockModule: the LockService of this application ${NOT_A_LOCK_SERVICE}`);
      this.findJobsAndElections();
    } catch (error) {
      // Nest runs no shutdown hook for an application whose startup failed, and hands it to
      // nobody who could close it: the connections of this module (and of the module that runs
      // the jobs, when this one is a second import) would keep the process alive.
      for (const explorer of new Set([this, RUNNING.get(this.discovery), ...(ALL.get(this.discovery) ?? [])])) {
        // A fake has none to close (and must not hide the error with a TypeError of its own).
        if (explorer !== undefined && explorer.locks instanceof LockService) (explorer.locks[LOCK_RUNNER] as LockManager).close().catch(() => undefined);
      }
      throw error;
    }
  }

  /**
   * An application runs its jobs and elections through one `RedisLockModule`: every module
   * instance's explorer finds every provider of the application, so a second one would run each
   * job's locks and each election again (an election competing with itself).
   */
  private claimApplication(): void {
    const first = RUNNING.get(this.discovery);
    if (first !== undefined && first !== this) {
      throw new RedisLockError(
        'RedisLockModule is imported more than once in this application (forRoot() or forRootAsync() in two modules), and both would run every ' +
          '@OnOneInstance()/@WithoutOverlapping() job and @LeaderElection() of the application (an election competing with itself). ' +
          'Import RedisLockModule once, with isGlobal: true, and let the feature modules use it.',
      );
    }
    RUNNING.set(this.discovery, this);
  }

  private findJobsAndElections(): void {
    const claims = new Map<string, Claim>();
    const claim = (key: string, by: string, owner: object, type: object, what: object, wrapper: InstanceWrapper): void => {
      const module = (wrapper.host as { name?: string } | undefined)?.name;
      const earlier = claims.get(key);
      if (earlier === undefined) claims.set(key, { by, owner, type, what, module });
      else if (earlier.owner !== owner) {
        if (earlier.type === type && earlier.what === what) throw new DuplicateLockKeyError(key, earlier.by, by, PROVIDED_TWICE);
        // Two classes of one name (in two modules) would otherwise read as one method clashing with itself.
        if (earlier.by !== by) throw new DuplicateLockKeyError(key, earlier.by, by);
        const inModule = (where: string, name: string | undefined): string => (name === undefined ? where : `${where.slice(0, -1)}, in ${name})`);
        const name = (type as { name?: string }).name;
        throw new DuplicateLockKeyError(key, inModule(earlier.by, earlier.module), inModule(by, module), `Two different classes are named ${shownName(name ?? '')}: give one of them another key.`);
      }
    };
    // The module's ttl, for elections that give none (they retry every ttl / 3); its fenceRetention,
    // which every job's and election's own ttl must stay within.
    const { ttl: moduleTtl, shutdownTimeout, fenceRetention, waitForReplicas } = resolveModuleOptions(this.options, { needsRedis: false });
    // Refused here, not at every call (a job that never runs, an election retried for ever).
    const checkOwnTtl = (ttl: number, given: unknown, where: string): void => {
      try {
        checkTtlWithinRetention(ttl, given, fenceRetention);
        checkTtlOverReplicaWait(ttl, given, waitForReplicas?.timeout);
      } catch (error) {
        throw error instanceof InvalidLockOptionsError ? error.within(where) : error;
      }
    };
    /** The job `spec` of the provider class `type`: its keys pass the key rules and are claimed. */
    const checkJob = (spec: JobSpec, type: object, wrapper: InstanceWrapper, owner: object, provider: string): JobBinding => {
      const job = this.jobs.bind(spec, type);
      if (job.defaultKey && !(typeof (type as { name?: unknown }).name === 'string' && (type as { name: string }).name.length > 0)) {
        throw new RedisLockError(`${jobDecorators(spec)} on ${spec.where}: the provider class has no name, so the job has no default key. Give the job a key.`);
      }
      const claims = jobClaims(job);
      // The keys the job locks at each call (a default key, `<key>:owner`) pass the key rules
      // here, or the job would fail at every call.
      for (const { key, role } of claims) {
        try {
          checkLockKey(key);
        } catch (error) {
          throw new LockKeyError(`@${role}() on ${job.where}: the job would lock ${quoteKey(key)}, which no lock can have: ${(error as Error).message}`);
        }
        const ttl = jobTtl(spec, role);
        if (ttl !== undefined) checkOwnTtl(ttl, ttl, `@${role}() on ${job.where}`);
      }
      for (const { key, role } of claims) claim(key, `${job.where} (@${role}${provider})`, owner, type, spec, wrapper);
      return job;
    };
    // A transient or request-scoped factory's class is known once it returns an instance (see
    // equipMade): its jobs are checked then, against the same claims.
    this.checkMadeJob = (spec, type, wrapper, owner) => void checkJob(spec, type, wrapper, owner, `, provider ${tokenName(wrapper.token)}`);
    const wrappers = [...this.discovery.getControllers(), ...this.discovery.getProviders()];
    // Without @nestjs/schedule in the application its metadata schedules nothing, and a method
    // declared to return an Observable is its callers' to subscribe to.
    const scheduling = schedulingIn(wrappers);
    // One instance under two tokens (useExisting) runs its jobs once; request-scoped and
    // transient providers have no instance yet, and count once per provider.
    const seen = new Set<object>();
    const found: { wrapper: InstanceWrapper; type: object; prototype: object }[] = [];
    for (const wrapper of wrappers) {
      // Each module's explorer equips the providers that see its LockService, as Nest would inject it.
      if (this.seenBy(wrapper)) equipScopedFactory(wrapper, (instance) => this.equipMade(instance, wrapper));
      const prototype = prototypeOf(wrapper);
      const identity = (wrapper.instance as object | undefined) ?? wrapper;
      if (prototype === undefined || seen.has(identity)) continue;
      seen.add(identity);
      found.push({ wrapper, type: prototype.constructor, prototype });
    }
    const providedTimes = new Map<object, number>();
    for (const { type } of found) providedTimes.set(type, (providedTimes.get(type) ?? 0) + 1);
    const logger = this.locks[LOCK_RUNNER].logger;
    for (const { wrapper, type, prototype } of found) {
      for (const name of methodNames(this.scanner, prototype)) {
        const method: unknown = (prototype as Record<PropertyKey, unknown>)[name];
        const locked = typeof method === 'function' ? (Reflect.getOwnMetadata(LOCKED_METADATA, method) as { key?: unknown; options?: AnyLockOptions & { ttl?: unknown } } | undefined) : undefined;
        if (locked !== undefined) {
          const where = `@Locked on ${shownName((type as { name?: string }).name || '(anonymous class)', String(name))}`;
          // Its ttl passed the decorator's own checks; those against the options of the module
          // whose LockService it uses come here (with two modules, not the other one's), and so
          // does the kind of lock (a semaphore, a read lock, barging), which quorum mode cannot
          // serve: every call of the method would fail.
          if (this.seenBy(wrapper)) {
            if (locked.options?.ttl !== undefined) checkOwnTtl(parseDuration(locked.options.ttl, 'ttl', MIN_TTL_MS, MAX_TTL_MS), locked.options.ttl, where);
            // `onBusy` is the decorator's own, no option of the lock call.
            const { onBusy: _, ...callOptions } = (locked.options ?? {}) as AnyLockOptions & { onBusy?: unknown };
            (this.locks[LOCK_RUNNER] as LockManager).assertServes(callOptions, shownTemplate(locked.key), where);
          }
          this.giveLockService(wrapper, where);
          if (scheduling) {
            checkScheduledReturn(where, prototype, name, method as Function);
            // What the schedule runs: an Observable it returns, of a type not declared, is never subscribed to.
            const schedule = scheduleOf(method as Function);
            if (schedule !== undefined) lockedMethodScheduled(method as Function, schedule);
          }
        }
        const spec = typeof method === 'function' ? jobSpecOf(prototype, name, method) : undefined;
        if (spec === undefined) continue;
        if (scheduling) checkScheduledReturn(`${jobDecorators(spec)} on ${spec.where}`, prototype, name, method as Function);
        this.claimApplication();
        // Nest injects properties into class providers only: one made by `useFactory` or given
        // by `useValue` gets its orchestrator here, or every call of its jobs would fail.
        const instance = wrapper.instance as Record<symbol, unknown> | undefined;
        if (instance !== null && typeof instance === 'object' && !hasOpenOrchestrator(instance)) {
          if (!Object.isExtensible(instance)) {
            throw new RedisLockError(`${jobDecorators(spec)} on ${spec.where}: the provider's instance is frozen (or sealed), so its jobs cannot be given their lock service; provide the class itself, or an instance that is not frozen.`);
          }
          instance[JOB_ORCHESTRATOR_PROPERTY] = this.jobs;
        }
        const provider = providedTimes.get(type)! > 1 ? `, provider ${tokenName(wrapper.token)}` : '';
        const job = checkJob(spec, type, wrapper, {}, provider);
        // What the schedule runs: an Observable it returns, of a type not declared, is never subscribed to.
        if (scheduling) this.jobs.scheduledBy(job, scheduleOf(method as Function));
        if (job.defaultKey && MINIFIED_NAME.test((type as { name: string }).name)) {
          logger.warn(
            `${job.where} (@${jobClaims(job)[0]!.role}) uses the default key ${quoteKey(job.key)}, made from a class name that looks minified: a build that renames the class moves the lock, and instances of two builds would run the job at once. Give the job a key.`,
          );
        }
      }
    }
    const candidates = new Map<unknown, { wrapper: InstanceWrapper; type: Function; election: LeaderElectionMetadata }>();
    for (const wrapper of wrappers) {
      const type = (wrapper.instance as object | undefined)?.constructor ?? wrapper.metatype;
      // Inherited, as job methods are: a provided subclass of an elected (abstract) class runs its election.
      const election = typeof type === 'function' ? (Reflect.getMetadata(LEADER_ELECTION_METADATA, type) as LeaderElectionMetadata | undefined) : undefined;
      // One instance under two tokens (useExisting) is one candidate.
      if (election === undefined || (wrapper.instance && candidates.has(wrapper.instance))) continue;
      candidates.set(wrapper.instance ?? wrapper, { wrapper, type: type!, election });
    }
    const electedTimes = new Map<Function, number>();
    for (const { type } of candidates.values()) electedTimes.set(type, (electedTimes.get(type) ?? 0) + 1);
    if (candidates.size > 0) this.claimApplication();
    for (const { wrapper, type, election } of candidates.values()) {
      const provider = electedTimes.get(type)! > 1 ? `, provider ${tokenName(wrapper.token)}` : '';
      const where = `${shownName(type.name)} (@LeaderElection${provider})`;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient || !wrapper.instance) {
        throw new RedisLockError(`@LeaderElection() on ${shownName(type.name)}: the class must be a singleton provider (not request-scoped or transient), so that one instance holds the leadership.`);
      }
      claim(election.key, where, wrapper.instance as object, type, election, wrapper);
      // Refused here, not at every try for the leadership (which would retry it for ever).
      if (election.ttl !== undefined) checkOwnTtl(election.ttl, election.ttl, `@LeaderElection() on ${shownName(type.name)}`);
      // Always a ttl, so always its own renewal interval (a third of it), as for jobs' locks: the
      // module's renewInterval may be nearly its ttl, and a term renewed that late is lost to
      // one slow renewal.
      const ttl = election.ttl ?? moduleTtl;
      const runner = new LeaderElectionRunner(this.locks, wrapper.instance as object, election.key, shownName(type.name), ttl, Math.max(1, Math.floor(ttl / 3)));
      this.elections.push(runner);
      this.leadership.register(runner);
    }
    this.leadership.electionsFound([...candidates.values()].flatMap(({ wrapper }) => (wrapper.instance ? [wrapper.instance as object] : [])), logger);
    this.shutdownTimeout = shutdownTimeout;
  }

  /**
   * Nest injects properties into class providers only: a provider made by `useFactory` or given
   * by `useValue` with `@Locked` methods gets its `LockService` here, or every call would fail.
   */
  private giveLockService(wrapper: InstanceWrapper, where: string): void {
    const instance = wrapper.instance as Record<symbol, unknown> | undefined;
    if (instance === null || typeof instance !== 'object' || hasOpenService(instance) || !this.seenBy(wrapper)) return;
    if (!Object.isExtensible(instance)) {
      throw new RedisLockError(`${where}: the provider's instance is frozen (or sealed), so it cannot be given its LockService; provide the class itself, or an instance that is not frozen.`);
    }
    instance[LOCK_SERVICE_PROPERTY] = this.locks;
  }

  /**
   * Whether a provider of `wrapper`'s module is injected with this module's `LockService` (or
   * none can be found: then the first explorer to come equips it, as before). With two
   * `RedisLockModule` instances, a feature module's own serves its providers, as Nest injects
   * it into its class providers.
   */
  private seenBy(wrapper: InstanceWrapper): boolean {
    const seen = lockServiceSeenBy(wrapper.host);
    return seen === undefined || seen === this.locks;
  }

  /** Whether a prototype (of an instance a scoped factory made) has `@Locked` methods. */
  private readonly lockedPrototypes = new WeakMap<object, boolean>();

  /**
   * An instance a request-scoped or transient factory made (see `equipScopedFactory`) gets its
   * `LockService` when its class has `@Locked` methods; anything else it returns is left alone.
   * A frozen one cannot take it: its calls then fail, saying so.
   */
  private equipMade(instance: unknown, wrapper: InstanceWrapper): void {
    if (instance === null || typeof instance !== 'object' || !Object.isExtensible(instance)) return;
    const prototype = Object.getPrototypeOf(instance) as object | null;
    if (prototype === null) return;
    let locked = this.lockedPrototypes.get(prototype);
    if (locked === undefined) {
      locked = methodNames(this.scanner, prototype).some((name) => {
        const method: unknown = (prototype as Record<PropertyKey, unknown>)[name];
        return typeof method === 'function' && Reflect.getOwnMetadata(LOCKED_METADATA, method) !== undefined;
      });
      this.lockedPrototypes.set(prototype, locked);
    }
    const target = instance as Record<symbol, unknown>;
    if (locked && !hasOpenService(target)) target[LOCK_SERVICE_PROPERTY] = this.locks;
    const jobs = this.scanner.getAllMethodNames(prototype).flatMap((name) => {
      const method: unknown = (prototype as Record<string, unknown>)[name];
      const spec = typeof method === 'function' ? jobSpecOf(prototype, name, method) : undefined;
      return spec === undefined ? [] : [spec];
    });
    if (jobs.length === 0) return;
    this.checkMadeJobs(prototype, jobs, wrapper);
    if (!hasOpenOrchestrator(target)) target[JOB_ORCHESTRATOR_PROPERTY] = this.jobs;
  }

  /** Set by findJobsAndElections: checks and claims one job of an instance a scoped factory made. */
  private checkMadeJob?: (spec: JobSpec, type: object, wrapper: InstanceWrapper, owner: object) => void;
  /** The jobs of each class a scoped factory made, by provider: their claims' owner, and whether they passed. */
  private readonly madeJobs = new WeakMap<object, WeakMap<InstanceWrapper, { owners: Map<JobSpec, object>; checked: Set<JobSpec> }>>();

  /**
   * The jobs of an instance a transient or request-scoped factory made pass the startup's checks
   * (key rules, ttl, and no key another job or election uses) when its class is first seen for
   * the provider: else the factory's call fails with the error (at startup for a transient
   * provider Nest makes for a singleton, in the request for a request-scoped one).
   */
  private checkMadeJobs(prototype: object, specs: JobSpec[], wrapper: InstanceWrapper): void {
    let byWrapper = this.madeJobs.get(prototype);
    if (byWrapper === undefined) this.madeJobs.set(prototype, (byWrapper = new WeakMap()));
    let made = byWrapper.get(wrapper);
    if (made === undefined) byWrapper.set(wrapper, (made = { owners: new Map(), checked: new Set() }));
    for (const spec of specs) {
      if (made.checked.has(spec)) continue;
      // One owner for every instance the provider makes (a failed check tried again claims as the same one).
      const owner = made.owners.get(spec) ?? {};
      made.owners.set(spec, owner);
      this.checkMadeJob?.(spec, prototype.constructor, wrapper, owner);
      made.checked.add(spec);
    }
  }

  onApplicationBootstrap(): void {
    for (const election of this.elections) election.start();
  }

  /**
   * Nest destroys this provider before the orchestrator it depends on: the jobs are told to stop
   * now too, beside the leaders, rather than after the leaders' hooks had their shutdownTimeout.
   * Once, as the orchestrator's: Nest runs the whole shutdown again for an `app.close()` called
   * after an earlier one settled, and a leader's hook that never returned would be waited for again.
   */
  onModuleDestroy(): Promise<void> {
    return (this.stopping ??= Promise.all([...this.elections.map((election) => election.stop(this.shutdownTimeout)), this.jobs.onModuleDestroy()]).then(() => undefined));
  }

  private stopping?: Promise<void>;
}

function prototypeOf(wrapper: InstanceWrapper): object | undefined {
  const instance = wrapper.instance as object | undefined;
  if (instance !== undefined && instance !== null) return Object.getPrototypeOf(instance) ?? undefined;
  // Request-scoped and transient providers have no instance yet: their class has the methods.
  const type = wrapper.metatype as { prototype?: unknown } | null | undefined;
  return typeof type === 'function' && typeof type.prototype === 'object' ? (type.prototype as object) : undefined;
}

/** A provider's token as messages show it: a class or Symbol named by code, which may hold any text, as names are (see `shownName`). */
function tokenName(token: unknown): string {
  if (typeof token === 'function') {
    const name = (token as { name?: unknown }).name;
    return typeof name === 'string' && name.length > 0 ? shownName(name) : '(anonymous class)';
  }
  if (typeof token === 'string') return quoteKey(token);
  if (typeof token === 'symbol') return token.description === undefined ? 'Symbol()' : `Symbol(${shownName(token.description)})`;
  return String(token);
}

/**
 * The job spec of a provider's method: on the function (the job decorators' wrapper), or on the
 * method's name where it is defined, when a decorator applied after them replaced the function
 * without its metadata. Not on a name an undecorated override redefines in a subclass.
 */
/**
 * The method names of `prototype` and the classes it extends: Nest's `MetadataScanner` lists the
 * string ones, and the Symbol ones follow. A `@Locked` method may be named by a Symbol; one of a
 * provider made by a factory gets its `LockService` only if it is found here. (A job method may
 * not: the job decorators refuse it, @nestjs/schedule would never run it.)
 */
function methodNames(scanner: MetadataScanner, prototype: object): (string | symbol)[] {
  // A copy: the scanner caches its list per prototype.
  const names: (string | symbol)[] = [...scanner.getAllMethodNames(prototype)];
  const seen = new Set<symbol>();
  for (let owner: object | null = prototype; owner !== null && owner !== Object.prototype; owner = Object.getPrototypeOf(owner) as object | null) {
    for (const symbol of Object.getOwnPropertySymbols(owner)) {
      if (seen.has(symbol)) continue;
      seen.add(symbol);
      if (typeof Object.getOwnPropertyDescriptor(owner, symbol)?.value === 'function') names.push(symbol);
    }
  }
  return names;
}

function jobSpecOf(prototype: object, name: string | symbol, method: Function): JobSpec | undefined {
  const own = Reflect.getOwnMetadata(JOB_LOCK_METADATA, method) as JobSpec | undefined;
  if (own !== undefined) return own;
  let owner: object | null = prototype;
  while (owner !== null && !Object.prototype.hasOwnProperty.call(owner, name)) owner = Object.getPrototypeOf(owner) as object | null;
  return owner === null ? undefined : (Reflect.getOwnMetadata(JOB_LOCK_METADATA, owner, name) as JobSpec | undefined);
}

/**
 * Whether `instance` has a `LockService` that is not shut down. One it has is kept (Nest's
 * property injection into a class provider, or a provider two module instances share); one of
 * an application closed since is replaced: the same object given to a later application of the
 * process (a module-level object, as a test suite building an application per test hands out)
 * would otherwise refuse every call.
 */
function hasOpenService(instance: Record<symbol, unknown>): boolean {
  const service = instance[LOCK_SERVICE_PROPERTY];
  return service instanceof LockService && service[LOCK_RUNNER].closing?.aborted !== true;
}

/** Whether `target` has the orchestrator of an application that is not shutting down (one given to a later application gets that one's). */
function hasOpenOrchestrator(target: Record<symbol, unknown>): boolean {
  const given = target[JOB_ORCHESTRATOR_PROPERTY];
  return given instanceof JobLockOrchestrator && !given.shutDown;
}

/**
 * A `@Locked` method's key as a startup refusal shows it: its template, an array's templates
 * joined with `,` (as `lock.name` names a multi-key lock), else the key function it has.
 */
function shownTemplate(key: unknown): string {
  if (typeof key === 'string') return key;
  if (Array.isArray(key) && key.every((template) => typeof template === 'string')) return key.join(',');
  return '(its key function)';
}
