import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Inject, Injectable, Module } from '@nestjs/common';
import { Cron, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { Observable, Subject, filter, lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  DuplicateLockKeyError,
  LeaderElection,
  LeadershipService,
  Locked,
  LockLostError,
  LockService,
  OnOneInstance,
  RedisLockModule,
  WithoutOverlapping,
  LOCK_DIAGNOSTICS_CHANNELS,
  type Lock,
  type LockEvent,
  type LockSkippedEvent,
  type OnLeadershipAcquired,
  type OnLeadershipLost,
} from '../lib/index.js';
import { FaultProxy } from '../explore/real/fault-proxy.mjs';
import { CapturedLogs, sleep } from './support/lock-app.js';
import { useLockMetrics } from './support/lock-metrics.js';
import { blockEventLoop } from './support/mechanism.js';
import { redisUrl, useRedis } from './support/redis.js';
import { closeNow, startJobApp, type JobApp } from './jobs/support.js';

type Started = JobApp;
const start = startJobApp;

const events = (app: Started): LockEvent[] => {
  const seen: LockEvent[] = [];
  app.get(LockService).events$.subscribe((event) => seen.push(event));
  return seen;
};

describe('shutdown with running jobs and leaders (issue 18, item 5)', () => {
  const redis = useRedis();

  @Injectable()
  class Loop {
    started = false;
    reason?: unknown;
    constructor(readonly locks: LockService) {}

    // The pattern of docs/jobs-and-leaders.md: work until told to stop.
    @OnOneInstance({ ttl: '60s' })
    @WithoutOverlapping()
    async run(): Promise<string> {
      this.started = true;
      const { signal } = this.locks.current()!;
      while (!signal.aborted) await sleep(10);
      this.reason = signal.reason;
      return 'stopped';
    }
  }

  it('aborts a running job with a shutdown reason, waits for it, then hands both locks back for the next instance', async () => {
    const a = await start([Loop]);
    const b = await start([Loop]);
    const running = a.get(Loop).run();
    await expect.poll(() => a.get(Loop).started).toBe(true);
    expect(await redis.exists('lock:{Loop.run}', 'lock:{Loop.run:owner}')).toBe(2);
    // Before the fix this never settled: the signal aborted only after the job had ended.
    await closeNow(a);
    expect(await running).toBe('stopped');
    expect(a.get(Loop).reason).toBeInstanceOf(LockLostError);
    expect((a.get(Loop).reason as LockLostError).reason).toBe('shutdown');
    // Both handed back when close() settled: with a 60 s lease, nothing else would free them.
    expect(await redis.exists('lock:{Loop.run}', 'lock:{Loop.run:owner}')).toBe(0);
    // So the other instance takes the job over at its first call.
    void b.get(Loop).run();
    await expect.poll(() => b.get(Loop).started).toBe(true);
  });

  it('gives a job that ignores its signal shutdownTimeout, then goes on closing and says so', async () => {
    @Injectable()
    class Stuck {
      started = false;
      @WithoutOverlapping({ ttl: '60s' })
      async run(): Promise<void> {
        this.started = true;
        await new Promise(() => undefined);
      }
    }
    const a = await start([Stuck], { shutdownTimeout: 300 });
    void a.get(Stuck).run();
    await expect.poll(() => a.get(Stuck).started).toBe(true);
    await closeNow(a);
    expect(a.logs.has('warn', 'Stuck.run was still running')).toBe(true);
    expect(await redis.exists('lock:{Stuck.run}')).toBe(0);
  });

  it('aborts a leader that waits for its signal, calls onLeadershipLost, and hands the lease back', async () => {
    const hooks: string[] = [];
    @LeaderElection('hub', { ttl: '60s' })
    @Injectable()
    class Hub implements OnLeadershipAcquired, OnLeadershipLost {
      async onLeadershipAcquired(lock: Lock): Promise<void> {
        hooks.push('acquired');
        // The pattern of docs/jobs-and-leaders.md: lead until told to stop.
        await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
        hooks.push(`stopped (${(lock.signal.reason as LockLostError).reason})`);
      }
      onLeadershipLost(lock: Lock): void {
        hooks.push(`lost (aborted: ${lock.signal.aborted})`);
      }
    }
    const a = await start([Hub]);
    await expect.poll(() => hooks).toEqual(['acquired']);
    const b = await start([Hub]);
    // The follower's first try (at bootstrap) finds the lease taken; its next is 20 s later.
    const seenB = events(b);
    await expect.poll(() => seenB.some((event) => event.type === 'not-acquired')).toBe(true);
    expect(b.get(LeadershipService).isLeader('hub')).toBe(false);
    const token = await redis.get('lock:{hub}');
    await closeNow(a);
    expect(hooks).toEqual(['acquired', 'stopped (shutdown)', 'lost (aborted: true)']);
    // Handed back when close() settled: the follower takes it at its next try, not after the 60 s lease.
    expect(token).not.toBeNull();
    expect(await redis.exists('lock:{hub}')).toBe(0);
  });

  it('gives a leader whose hook ignores its signal shutdownTimeout, then hands the lease back and says so', async () => {
    let started = false;
    @LeaderElection('deaf-hub', { ttl: '60s' })
    @Injectable()
    class DeafHub implements OnLeadershipAcquired {
      async onLeadershipAcquired(): Promise<void> {
        started = true;
        await new Promise(() => undefined);
      }
    }
    const a = await start([DeafHub], { shutdownTimeout: 300 });
    await expect.poll(() => started).toBe(true);
    // Without the bound this never settled: the hook never returns.
    await closeNow(a);
    expect(a.logs.has('warn', 'The hooks of DeafHub were still running 300 ms')).toBe(true);
    // Handed back at close, not after the 60 s lease.
    expect(await redis.exists('lock:{deaf-hub}')).toBe(0);
  });
});

// Found by the real-Redis explorer (a worker cut off from Redis as it closed): the hand-back of
// a job's owner lease and of a leadership waited for Redis without a bound, so app.close() never
// settled while Redis did not answer.
describe('shutdown while Redis does not answer, with a job lease or a leadership held', () => {
  const redis = useRedis();
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    proxy?.heal();
    await proxy?.close();
    proxy = undefined;
  });

  /** Whether `closing` settled within a bound that only a hang exceeds (the shutdownTimeout is 300 ms). */
  const settles = (closing: Promise<void>) => Promise.race([closing.then(() => true), sleep(10_000).then(() => false)]);

  it('gives up on handing the owner lease back after shutdownTimeout, and says so', async () => {
    @Injectable()
    class Nightly {
      runs = 0;
      @OnOneInstance({ ttl: '60s' })
      async run(): Promise<void> {
        this.runs++;
      }
    }
    proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
    const url = new URL(redisUrl());
    url.port = String(proxy.port);
    const a = await start([Nightly], { redis: url.toString(), shutdownTimeout: 300 });
    await a.get(Nightly).run();
    expect(a.get(Nightly).runs).toBe(1);
    // The instance keeps the job's lease between runs.
    expect(await redis.exists('lock:{Nightly.run:owner}')).toBe(1);
    proxy.cut();
    expect(await settles(closeNow(a))).toBe(true);
    expect(a.logs.has('warn', 'Could not hand the lease')).toBe(true);
  });

  it('gives up on handing a leadership back after shutdownTimeout, and says so', async () => {
    let leading = false;
    @LeaderElection('cut-off-hub', { ttl: '60s' })
    @Injectable()
    class CutOffHub implements OnLeadershipAcquired {
      onLeadershipAcquired(): void {
        leading = true;
      }
    }
    proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
    const url = new URL(redisUrl());
    url.port = String(proxy.port);
    const a = await start([CutOffHub], { redis: url.toString(), shutdownTimeout: 300 });
    await expect.poll(() => leading).toBe(true);
    proxy.cut();
    expect(await settles(closeNow(a))).toBe(true);
    expect(a.logs.has('warn', 'could not release the leadership')).toBe(true);
  });
});

describe('a lease whose local deadline passed starts no user work (issue 18, item 6)', () => {
  useRedis();

  /** Blocks the event loop for `ms` when `key` is acquired: after the lease started, before the caller's code. */
  function pauseAfterAcquiring(app: Started, key: string, ms: number): void {
    app.get(LockService).events$.pipe(filter((event) => event.type === 'acquired' && event.key === key)).subscribe(() => blockEventLoop(ms));
  }

  it('using(): the callback does not run, and the call rejects with the loss', async () => {
    const app = await start([]);
    const locks = app.get(LockService);
    pauseAfterAcquiring(app, 'u', 500);
    let ran = false;
    const error = await locks.using('u', () => (ran = true), { ttl: 200 }).catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).reason).toBe('expired');
  });

  it('@Locked: the method does not run', async () => {
    @Injectable()
    class Svc {
      ran = false;
      @Locked('l', { ttl: 200 })
      async work(): Promise<void> {
        this.ran = true;
      }
    }
    const app = await start([Svc]);
    pauseAfterAcquiring(app, 'l', 500);
    await expect(app.get(Svc).work()).rejects.toBeInstanceOf(LockLostError);
    expect(app.get(Svc).ran).toBe(false);
  });

  it('current(): never hands out a lease past its deadline as held', async () => {
    const app = await start([]);
    const locks = app.get(LockService);
    await locks.using('c', async () => {
      blockEventLoop(500);
      const lock = locks.current('c')!;
      expect(lock.held).toBe(false);
      expect(lock.signal.aborted).toBe(true);
      expect(locks.current()!.signal.reason).toBeInstanceOf(LockLostError);
    }, { ttl: 200 }).catch((error: unknown) => {
      if (!(error instanceof LockLostError)) throw error;
    });
  });

  it('re-entry: a nested acquisition of a lock past its deadline fails, its callback does not run', async () => {
    const app = await start([]);
    const locks = app.get(LockService);
    let inner = false;
    const error = await locks
      .using('r', async () => {
        blockEventLoop(500);
        await locks.using('r', () => (inner = true));
      }, { ttl: 200 })
      .catch((e: unknown) => e);
    expect(inner).toBe(false);
    expect(error).toBeInstanceOf(LockLostError);
  });

  it('a job: the run does not start on a run lock past its deadline', async () => {
    @Injectable()
    class Job {
      runs = 0;
      @WithoutOverlapping({ ttl: 200 })
      async run(): Promise<void> {
        this.runs++;
      }
    }
    const app = await start([Job]);
    pauseAfterAcquiring(app, 'Job.run', 500);
    await app.get(Job).run().catch(() => undefined);
    expect(app.get(Job).runs).toBe(0);
  });

  it('a leader: onLeadershipAcquired does not run on a lease past its deadline', async () => {
    const hooks: string[] = [];
    @LeaderElection('paused-leader', { ttl: 300 })
    @Injectable()
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(lock: Lock): void {
        hooks.push(`acquired ${lock.fencingToken} ${lock.signal.aborted ? 'aborted' : 'live'}`);
      }
      onLeadershipLost(lock: Lock): void {
        hooks.push(`lost ${lock.fencingToken}`);
      }
    }
    const logs = new CapturedLogs();
    // Subscribed before the election starts (at bootstrap), so the first term is paused.
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Leader] })
    class M {}
    const moduleRef = await Test.createTestingModule({ imports: [M] }).setLogger(logs).compile();
    let pausedTerm: number | undefined;
    moduleRef.get(LockService).events$.subscribe((event) => {
      if (event.type === 'acquired' && event.key === 'paused-leader' && pausedTerm === undefined) {
        pausedTerm = event.fencingToken!;
        blockEventLoop(600);
      }
    });
    await moduleRef.init();
    onTestFinished(() => moduleRef.close());
    // The next term is taken normally.
    await expect.poll(() => hooks.length).toBe(1);
    expect(hooks).toEqual([`acquired ${pausedTerm! + 1} live`]);
  });
});

describe('jobs returning an Observable (issue 18, item 7)', () => {
  const redis = useRedis();

  @Injectable()
  class Streams {
    subject = new Subject<number>();
    calls = 0;

    @WithoutOverlapping({ ttl: '1s' })
    declared(): Observable<number> {
      this.calls++;
      return this.subject.asObservable();
    }

    @WithoutOverlapping({ key: 'late', ttl: '1s' })
    async late(): Promise<Observable<number>> {
      this.calls++;
      return this.subject.asObservable();
    }
  }

  it('a method declared to return an Observable holds the run lock while subscribed; a call meanwhile is skipped', async () => {
    const app = await start([Streams]);
    const jobs = app.get(Streams);
    const values = lastValueFrom(jobs.declared().pipe(toArray()));
    // The method ran and its stream is subscribed (the key alone exists before the acquire's reply is handled).
    await expect.poll(() => jobs.calls).toBe(1);
    expect(await redis.exists('lock:{Streams.declared}')).toBe(1);
    jobs.subject.next(1);
    // Past the ttl: renewed while the stream lives.
    await sleep(1_300);
    expect(await lastValueFrom(jobs.declared().pipe(toArray()))).toEqual([]);
    expect(jobs.calls).toBe(1);
    jobs.subject.next(2);
    jobs.subject.complete();
    expect(await values).toEqual([1, 2]);
    // Given back by the stream's teardown, which runs after the last value reached the subscriber.
    await expect.poll(() => redis.exists('lock:{Streams.declared}')).toBe(0);
  });

  it('an Observable returned through a Promise holds the run lock until it completes', async () => {
    const app = await start([Streams]);
    const jobs = app.get(Streams);
    const stream = await jobs.late();
    const values = lastValueFrom(stream!.pipe(toArray()));
    jobs.subject.next(1);
    await sleep(1_300);
    expect(await redis.exists('lock:{late}')).toBe(1);
    expect(await jobs.late()).toBeUndefined();
    jobs.subject.complete();
    expect(await values).toEqual([1]);
    await expect.poll(() => redis.exists('lock:{late}')).toBe(0);
  });

  it('an error in the stream releases the run lock, and the next call runs', async () => {
    const app = await start([Streams]);
    const jobs = app.get(Streams);
    const failed = lastValueFrom(jobs.declared()).catch((error: unknown) => error);
    // The method ran and its stream is subscribed (the key alone exists before the acquire's reply is handled).
    await expect.poll(() => jobs.calls).toBe(1);
    expect(await redis.exists('lock:{Streams.declared}')).toBe(1);
    jobs.subject.error(new Error('feed broke'));
    expect(await failed).toMatchObject({ message: 'feed broke' });
    await expect.poll(() => redis.exists('lock:{Streams.declared}')).toBe(0);
    jobs.subject = new Subject<number>();
    const next = lastValueFrom(jobs.declared().pipe(toArray()));
    // The method ran and its stream is subscribed (the key alone exists before the acquire's reply is handled).
    await expect.poll(() => jobs.calls).toBe(2);
    expect(await redis.exists('lock:{Streams.declared}')).toBe(1);
    jobs.subject.next(3);
    jobs.subject.complete();
    expect(await next).toEqual([3]);
    expect(jobs.calls).toBe(2);
  });

  it('unsubscribing releases the run lock', async () => {
    const app = await start([Streams]);
    const jobs = app.get(Streams);
    const subscription = jobs.declared().subscribe();
    await expect.poll(() => redis.exists('lock:{Streams.declared}')).toBe(1);
    subscription.unsubscribe();
    await expect.poll(() => redis.exists('lock:{Streams.declared}')).toBe(0);
  });
});

describe('default keys (issue 18, item 8)', () => {
  const redis = useRedis();

  abstract class Sync {
    runs = 0;
    release?: () => void;
    @WithoutOverlapping()
    async run(): Promise<string> {
      this.runs++;
      await new Promise<void>((resolve) => (this.release = resolve));
      return this.constructor.name;
    }
  }
  @Injectable()
  class SyncUsers extends Sync {}
  @Injectable()
  class SyncOrders extends Sync {}

  it('gives each subclass its own default key', async () => {
    const app = await start([SyncUsers, SyncOrders]);
    const users = app.get(SyncUsers);
    const orders = app.get(SyncOrders);
    const a = users.run();
    const b = orders.run();
    // Both bodies started (the keys alone can show before the acquire's reply reached its
    // caller, the body not started yet), each under its own key.
    await expect.poll(() => users.release !== undefined && orders.release !== undefined).toBe(true);
    expect(await redis.exists('lock:{SyncUsers.run}', 'lock:{SyncOrders.run}')).toBe(2);
    users.release!();
    orders.release!();
    expect([await a, await b]).toEqual(['SyncUsers', 'SyncOrders']);
  });

  it('refuses an explicit key that two provided subclasses inherit', async () => {
    abstract class Base {
      @WithoutOverlapping({ key: 'nightly' })
      async run(): Promise<void> {}
    }
    @Injectable()
    class One extends Base {}
    @Injectable()
    class Two extends Base {}
    const error = await start([One, Two]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    expect((error as Error).message).toBe('Lock key "nightly" is used by both One.run (@WithoutOverlapping) and Two.run (@WithoutOverlapping). Give one of them another key.');
  });

  it('refuses the same job class provided twice', async () => {
    @Injectable()
    class Twice {
      @OnOneInstance()
      async run(): Promise<void> {}
    }
    const error = await start([Twice, { provide: 'SECOND', useClass: Twice }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    expect((error as Error).message).toBe(
      'Lock key "Twice.run:owner" is used by both Twice.run (@OnOneInstance, provider Twice) and Twice.run (@OnOneInstance, provider "SECOND"). ' +
        'Provide the class once (a second token can name the same instance with useExisting).',
    );
  });

  it('refuses an election class provided twice, and accepts it under a second token through useExisting', async () => {
    @LeaderElection('twice-leader')
    @Injectable()
    class TwiceLeader {}
    const error = await start([TwiceLeader, { provide: 'SECOND_LEADER', useClass: TwiceLeader }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    // Names both providers, and says what to do about one class provided twice (not "another key").
    expect((error as Error).message).toBe(
      'Lock key "twice-leader" is used by both TwiceLeader (@LeaderElection, provider TwiceLeader) and TwiceLeader (@LeaderElection, provider "SECOND_LEADER"). ' +
        'Provide the class once (a second token can name the same instance with useExisting).',
    );
    const app = await start([TwiceLeader, { provide: 'ALIAS_LEADER', useExisting: TwiceLeader }]);
    await expect.poll(() => app.get(LeadershipService).isLeader('twice-leader')).toBe(true);
  });

  it('accepts one instance under two tokens (useExisting)', async () => {
    @Injectable()
    class Aliased {
      @WithoutOverlapping()
      async run(): Promise<number> {
        return 1;
      }
    }
    const app = await start([Aliased, { provide: 'ALIAS', useExisting: Aliased }]);
    expect(await app.get(Aliased).run()).toBe(1);
  });

  it('joins the module option jobNamespace to default keys, so two applications do not exclude each other', async () => {
    @Injectable()
    class Export {
      release?: () => void;
      @OnOneInstance()
      async run(): Promise<string> {
        await new Promise<void>((resolve) => (this.release = resolve));
        return 'ran';
      }
    }
    const billing = await start([Export], { jobNamespace: 'billing' });
    const shipping = await start([Export], { jobNamespace: 'shipping' });
    const a = billing.get(Export).run();
    const b = shipping.get(Export).run();
    // Both bodies started (each holds its run lock under its own namespace): the owner keys are
    // written before the run lock is taken, so they alone do not say the bodies run yet.
    await expect.poll(() => billing.get(Export).release !== undefined && shipping.get(Export).release !== undefined).toBe(true);
    expect(await redis.exists('lock:{billing:Export.run:owner}', 'lock:{shipping:Export.run:owner}')).toBe(2);
    billing.get(Export).release!();
    shipping.get(Export).release!();
    expect([await a, await b]).toEqual(['ran', 'ran']);
    await expect(start([Export], { jobNamespace: 'a{b' })).rejects.toThrow(/Option "jobNamespace"/);
  });

  it('warns about a default key from a class name that looks minified', async () => {
    @Injectable()
    class e {
      @WithoutOverlapping()
      async run(): Promise<void> {}
    }
    const app = await start([e]);
    expect(app.logs.has('warn', 'e.run (@WithoutOverlapping) uses the default key "e.run"')).toBe(true);
  });
});

describe('names, labels and skipped calls (issue 18, items 9 and 10)', () => {
  useRedis();
  const lockMetrics = useLockMetrics();
  const subscriptions: [string, (message: unknown) => void][] = [];
  afterEach(() => {
    for (const [name, fn] of subscriptions.splice(0)) unsubscribe(name, fn);
  });

  @Injectable()
  class Named {
    release?: () => void;
    constructor(readonly locks: LockService) {}
    signal?: AbortSignal;
    @OnOneInstance({ ttl: '5s' })
    @WithoutOverlapping()
    async run(): Promise<string> {
      this.signal = this.locks.current()!.signal;
      await new Promise<void>((resolve) => (this.release = resolve));
      return 'done';
    }
  }

  it('names job and leader locks Class.method and the election key, visible in inspect() and events', async () => {
    @LeaderElection('named-leader')
    @Injectable()
    class NamedLeader {}
    const app = await start([Named, NamedLeader]);
    const seen = events(app);
    const locks = app.get(LockService);
    const running = app.get(Named).run();
    await expect.poll(async () => (await locks.inspect('Named.run')).held).toBe(true);
    expect((await locks.inspect('Named.run')).holder?.label).toBe('Named.run');
    expect((await locks.inspect('Named.run:owner')).holder?.label).toBe('Named.run (@OnOneInstance)');
    await expect.poll(async () => (await locks.inspect('named-leader')).held).toBe(true);
    expect((await locks.inspect('named-leader')).holder?.label).toBe('NamedLeader (@LeaderElection)');
    app.get(Named).release!();
    await running;
    const names = seen.filter((event) => event.type === 'released').map((event) => `${event.key} ${event.name}`);
    expect(names).toContain('Named.run Named.run');
    await closeNow(app);
    expect(seen.filter((event) => event.type === 'released' || event.type === 'lost').map((event) => `${event.key} ${event.name}`)).toEqual(
      expect.arrayContaining(['Named.run:owner Named.run:owner', 'named-leader named-leader']),
    );
  });

  it('emits a skipped event with its reason on events$, the diagnostics channel and a metric', async () => {
    lockMetrics.enable();
    const published: unknown[] = [];
    const fn = (message: unknown): void => void published.push(message);
    subscribe(LOCK_DIAGNOSTICS_CHANNELS.skipped, fn);
    subscriptions.push([LOCK_DIAGNOSTICS_CHANNELS.skipped, fn]);
    const a = await start([Named]);
    const b = await start([Named]);
    const seenA = events(a);
    const seenB = events(b);
    const running = a.get(Named).run();
    await expect.poll(() => a.get(Named).release).toBeDefined();
    expect(await a.get(Named).run()).toBeUndefined();
    expect(await b.get(Named).run()).toBeUndefined();
    const skipped = (seen: LockEvent[]) => seen.filter((event): event is LockSkippedEvent => event.type === 'skipped');
    expect(skipped(seenA).map(({ key, name, reason, where }) => ({ key, name, reason, where }))).toEqual([
      { key: 'Named.run', name: 'Named.run', reason: 'held-elsewhere', where: 'Named.run' },
    ]);
    expect(skipped(seenB).map(({ key, reason }) => ({ key, reason }))).toEqual([{ key: 'Named.run:owner', reason: 'other-owner' }]);
    expect(published.map((message) => (message as LockSkippedEvent).reason)).toEqual(['held-elsewhere', 'other-owner']);
    a.get(Named).release!();
    await running;
    // A run that is going when the application closes (it ignores its signal): a call after its signal aborted is skipped.
    a.get(Named).signal = undefined;
    const last = a.get(Named).run();
    await expect.poll(() => a.get(Named).signal?.aborted).toBe(false);
    const closing = closeNow(a);
    await expect.poll(() => a.get(Named).signal?.aborted).toBe(true);
    expect(await a.get(Named).run()).toBeUndefined();
    a.get(Named).release!();
    await closing;
    expect(await last).toBe('done');
    expect(skipped(seenA).map((event) => event.reason)).toEqual(['held-elsewhere', 'shutting-down']);
    const points = await lockMetrics.points('lock.skipped');
    const byReason = Object.fromEntries(points.map((point) => [`${point.attributes['lock.name']} ${point.attributes['lock.skip.reason']}`, point.value]));
    expect(byReason).toEqual({ 'Named.run held-elsewhere': 1, 'Named.run:owner other-owner': 1, 'Named.run shutting-down': 1 });
  });
});

describe('isLeader() (issue 18, item 11)', () => {
  useRedis();
  const runs: string[] = [];
  beforeEach(() => {
    runs.length = 0;
  });

  // The documented pattern: an election class with no hooks, and a cron that runs only on the leader.
  @LeaderElection('reports-leader', { ttl: '3s' })
  @Injectable()
  class ReportsLeader {}

  @Injectable()
  class Reports {
    constructor(@Inject(LeadershipService) private readonly leadership: LeadershipService) {}

    @Cron('0 0 0 1 1 *', { name: 'reports' })
    async build(): Promise<void> {
      const lock = this.leadership.leaderLock('reports-leader');
      if (lock === undefined) return;
      runs.push(`ran with ${lock.fencingToken}`);
    }
  }

  it('tells the leader from the others, and gives the current term\'s lock', async () => {
    const a = await start([ReportsLeader, Reports]);
    await expect.poll(() => a.get(LeadershipService).isLeader('reports-leader')).toBe(true);
    const b = await start([ReportsLeader, Reports]);
    expect(b.get(LeadershipService).isLeader('reports-leader')).toBe(false);
    expect(b.get(LeadershipService).leaderLock('reports-leader')).toBeUndefined();
    const lock = a.get(LeadershipService).leaderLock('reports-leader')!;
    expect(lock.held).toBe(true);
    await a.get(SchedulerRegistry).getCronJob('reports').fireOnTick();
    await b.get(SchedulerRegistry).getCronJob('reports').fireOnTick();
    await expect.poll(() => runs).toEqual([`ran with ${lock.fencingToken}`]);
    expect(() => a.get(LeadershipService).isLeader('nope')).toThrow(/isLeader\("nope"\): no @LeaderElection\(\) with this key in this application/);
    await closeNow(a);
    expect(a.get(LeadershipService).isLeader('reports-leader')).toBe(false);
    // The follower leads at its next try (every ttl / 3), not after the ttl.
    await expect.poll(() => b.get(LeadershipService).isLeader('reports-leader'), { timeout: 5_000 }).toBe(true);
  });

  it('is false once the lease\'s local deadline passed, before any renewal says so', async () => {
    const a = await start([ReportsLeader, Reports]);
    await expect.poll(() => a.get(LeadershipService).isLeader('reports-leader')).toBe(true);
    const lock = a.get(LeadershipService).leaderLock('reports-leader')!;
    blockEventLoop(3_200);
    expect(a.get(LeadershipService).isLeader('reports-leader')).toBe(false);
    expect(lock.signal.aborted).toBe(true);
  });
});
