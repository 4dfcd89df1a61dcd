import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { resolveModuleOptions } from '../core/options/lock-options.js';
import type { LeaderElectionMetadata } from '../decorators/leader-election.decorator.js';
import { DuplicateLockKeyError } from '../errors/duplicate-lock-key.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { RedisLockModuleOptions } from '../interfaces/redis-lock-options.interface.js';
import { LockService } from '../lock.service.js';
import { REDIS_LOCK_MODULE_OPTIONS } from '../redis-lock.module-definition.js';
import { jobClaims, type JobSpec } from './job-spec.js';
import { LeaderElectionRunner } from './leader-election.runner.js';
import { JOB_LOCK_METADATA, LEADER_ELECTION_METADATA } from './scheduling.constants.js';

interface Claim {
  by: string;
  /** The job spec or election class that made it: one owner may claim a key twice. */
  owner: object;
}

/**
 * Finds the job methods and `@LeaderElection` classes of the application when its modules
 * initialise, fails the startup if two of them would share a Redis lock, and runs the
 * elections from application bootstrap until the modules are destroyed.
 */
@Injectable()
export class LockSchedulingExplorer implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly elections: LeaderElectionRunner[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(LockService) private readonly locks: LockService,
    @Inject(REDIS_LOCK_MODULE_OPTIONS) private readonly options: RedisLockModuleOptions,
  ) {}

  onModuleInit(): void {
    const claims = new Map<string, Claim>();
    const claim = (key: string, by: string, owner: object): void => {
      const earlier = claims.get(key);
      if (earlier === undefined) claims.set(key, { by, owner });
      else if (earlier.owner !== owner) throw new DuplicateLockKeyError(key, earlier.by, by);
    };
    const wrappers = [...this.discovery.getControllers(), ...this.discovery.getProviders()];
    const seen = new Set<object>();
    for (const wrapper of wrappers) {
      const prototype = prototypeOf(wrapper);
      if (prototype === undefined || seen.has(prototype)) continue;
      seen.add(prototype);
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method: unknown = (prototype as Record<string, unknown>)[name];
        const spec = typeof method === 'function' ? (Reflect.getOwnMetadata(JOB_LOCK_METADATA, method) as JobSpec | undefined) : undefined;
        if (spec !== undefined) for (const { key, by } of jobClaims(spec)) claim(key, by, spec);
      }
    }
    // The module's ttl, for elections that give none: they retry every ttl / 3.
    const { ttl: moduleTtl } = resolveModuleOptions(this.options, { needsRedis: false });
    const candidates = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const type = (wrapper.instance as object | undefined)?.constructor ?? wrapper.metatype;
      const election = typeof type === 'function' ? (Reflect.getOwnMetadata(LEADER_ELECTION_METADATA, type) as LeaderElectionMetadata | undefined) : undefined;
      if (election === undefined || (wrapper.instance && candidates.has(wrapper.instance))) continue;
      candidates.add(wrapper.instance);
      const where = `${type!.name} (@LeaderElection)`;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient || !wrapper.instance) {
        throw new RedisLockError(`@LeaderElection() on ${type!.name}: the class must be a singleton provider (not request-scoped or transient), so that one instance holds the leadership.`);
      }
      claim(election.key, where, wrapper.instance as object);
      const ttl = election.ttl ?? moduleTtl;
      this.elections.push(new LeaderElectionRunner(this.locks, wrapper.instance as object, election.key, type!.name, election.ttl, Math.max(1, Math.floor(ttl / 3))));
    }
  }

  onApplicationBootstrap(): void {
    for (const election of this.elections) election.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.elections.map((election) => election.stop()));
  }
}

function prototypeOf(wrapper: InstanceWrapper): object | undefined {
  const instance = wrapper.instance as object | undefined;
  if (instance !== undefined && instance !== null) return Object.getPrototypeOf(instance) ?? undefined;
  // Request-scoped and transient providers have no instance yet: their class has the methods.
  const type = wrapper.metatype as { prototype?: unknown } | null | undefined;
  return typeof type === 'function' && typeof type.prototype === 'object' ? (type.prototype as object) : undefined;
}
