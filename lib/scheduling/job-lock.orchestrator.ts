import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { LockLogger } from '../core/engine/lock-logger.js';
import type { LockRunner } from '../core/engine/locked-call.js';
import type { Lock } from '../interfaces/lock.interface.js';
import { LockService } from '../lock.service.js';
import { LOCK_RUNNER } from '../redis-lock.constants.js';
import { quoteKey } from '../core/keys/quote-key.js';
import { jobKey, jobTtl, OWNER_SUFFIX, type JobSpec } from './job-spec.js';

/**
 * Runs the calls of `@WithoutOverlapping()` / `@OnOneInstance()` methods, and keeps the
 * `@OnOneInstance()` leases this instance owns between calls. At shutdown (module destroy,
 * before `LockService` closes) it refuses new calls, lets the running ones finish, then hands
 * its leases back, so that another instance takes the job over at its next tick.
 */
@Injectable()
export class JobLockOrchestrator implements OnModuleDestroy {
  /** The `<key>:owner` leases held, by job key. */
  private readonly owners = new Map<string, Lock>();
  /** Acquisitions of a lease in flight, so that concurrent calls share one. */
  private readonly claiming = new Map<string, Promise<Lock | null>>();
  private readonly running = new Set<Promise<unknown>>();
  private closing = false;

  constructor(@Inject(LockService) private readonly locks: LockService) {}

  private get runner(): LockRunner {
    return this.locks[LOCK_RUNNER];
  }

  private get logger(): LockLogger {
    return this.runner.logger;
  }

  /** Runs one call of a job method under its locks, or skips it (resolving `undefined`). */
  run(spec: JobSpec, invoke: () => unknown): Promise<unknown> {
    if (this.closing) {
      this.skipped(spec, 'the application is shutting down');
      return Promise.resolve(undefined);
    }
    return this.runLocked(spec, invoke);
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    // Only calls that are running: one still waiting for Redis gives up on its own (below), so
    // an unreachable Redis cannot hold the shutdown here.
    await Promise.allSettled(this.running);
    const leases = [...this.owners.values()];
    this.owners.clear();
    await Promise.all(
      leases.map((lease) =>
        lease.release().then(
          () => this.logger.debug?.(`Handed the lease ${quoteKey(lease.key)} back (shutting down).`),
          (error: unknown) => this.logger.warn(`Could not hand the lease ${quoteKey(lease.key)} back (${(error as Error).message}); it expires on its own.`),
        ),
      ),
    );
  }

  private async runLocked(spec: JobSpec, invoke: () => unknown): Promise<unknown> {
    const key = jobKey(spec);
    let owner: Lock | undefined;
    if (spec.OnOneInstance) {
      owner = await this.ownerLease(spec, key);
      if (owner === undefined) {
        this.skipped(spec, `another instance owns the lease ${quoteKey(key + OWNER_SUFFIX)}`);
        return undefined;
      }
    }
    let run: Lock | null = null;
    if (spec.WithoutOverlapping) {
      const ttl = jobTtl(spec, 'WithoutOverlapping');
      run = await this.locks.tryAcquire(key, ttl === undefined ? undefined : { ttl });
      if (run === null) {
        this.skipped(spec, `its run lock ${quoteKey(key)} is held: a run is still going, on this instance or another`);
        return undefined;
      }
    }
    if (this.closing) {
      await run?.release().catch(() => undefined);
      this.skipped(spec, 'the application is shutting down');
      return undefined;
    }
    const work = this.execute(owner, run, invoke);
    const tracked: Promise<unknown> = work.catch(() => undefined).finally(() => this.running.delete(tracked));
    this.running.add(tracked);
    return work;
  }

  private async execute(owner: Lock | undefined, run: Lock | null, invoke: () => unknown): Promise<unknown> {
    try {
      return await this.inChain(owner, () => (run === null ? invoke() : this.runner.runInChain(run, invoke)));
    } finally {
      await run?.release().catch((error: unknown) => {
        this.logger.warn(`Release of lock ${quoteKey(run.key)} failed (${(error as Error).message}); its lease will expire on its own.`);
      });
    }
  }

  private inChain(lock: Lock | undefined, invoke: () => unknown): unknown {
    return lock === undefined ? invoke() : this.runner.runInChain(lock, invoke);
  }

  /** The lease this instance owns for the job, taking it if it is free; undefined if not. */
  private async ownerLease(spec: JobSpec, key: string): Promise<Lock | undefined> {
    const held = this.owners.get(key);
    // A tick that fell due during a pause may run before the deadline sweeper: check the deadline.
    if (held !== undefined && this.runner.stillHeld(held)) return held;
    let claim = this.claiming.get(key);
    if (claim === undefined) {
      claim = this.claim(spec, key).finally(() => this.claiming.delete(key));
      this.claiming.set(key, claim);
    }
    return (await claim) ?? undefined;
  }

  private async claim(spec: JobSpec, key: string): Promise<Lock | null> {
    const ttl = jobTtl(spec, 'OnOneInstance');
    const lease = await this.locks.tryAcquire(key + OWNER_SUFFIX, ttl === undefined ? undefined : { ttl });
    if (lease === null) return null;
    if (this.closing) {
      await lease.release().catch(() => undefined);
      return null;
    }
    this.owners.set(key, lease);
    this.logger.debug?.(`${spec.where} runs on this instance: it took the lease ${quoteKey(lease.key)} (fencing token ${lease.fencingToken}).`);
    lease.signal.addEventListener(
      'abort',
      () => {
        if (this.owners.get(key) === lease) this.owners.delete(key);
      },
      { once: true },
    );
    return lease;
  }

  private skipped(spec: JobSpec, why: string): void {
    this.logger.debug?.(`Skipped ${spec.where}: ${why}.`);
  }
}
