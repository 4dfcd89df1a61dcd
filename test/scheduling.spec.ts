import { Injectable, Module, Scope } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DuplicateLockKeyError,
  InvalidLockOptionsError,
  LeaderElection,
  LockLostError,
  LockService,
  OnOneInstance,
  RedisLockModule,
  WithoutOverlapping,
  type JobMethodDecorator,
  type Lock,
  type OnLeadershipAcquired,
  type OnLeadershipLost,
} from '../lib/index.js';
import { CapturedLogs, sleep } from './support/lock-app.js';
import { countAttempts, leaseDeadline } from './support/mechanism.js';
import { redisUrl, useRedis } from './support/redis.js';
import { startRedisServer } from './support/redis-server.js';

const NEVER = '0 0 0 1 1 *';

interface Started {
  get<T>(type: new (...args: never[]) => T): T;
  logs: CapturedLogs;
  close(): Promise<void>;
}

const open: Started[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
});

async function start(providers: (new (...args: never[]) => unknown)[], ttl: number | string = 1_000): Promise<Started> {
  const logs = new CapturedLogs();
  @Module({ imports: [ScheduleModule.forRoot(), RedisLockModule.forRoot({ redis: redisUrl(), ttl: ttl as number })], providers })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
  await moduleRef.init();
  const app = { get: <T>(type: new (...args: never[]) => T) => moduleRef.get(type), logs, close: () => moduleRef.close() };
  open.push(app);
  return app;
}

describe('@WithoutOverlapping and @OnOneInstance', () => {
  const redis = useRedis();

  @Injectable()
  class Jobs {
    runs: string[] = [];
    current?: Lock;
    release?: () => void;
    constructor(readonly locks: LockService) {}

    // @Cron above: it puts its metadata on our wrapper.
    // The owner lease's own ttl: a claim answered more than a sixth of it after the call is
    // skipped (owner-uncertain), and with the run lock's 500 ms a loaded machine's first claim
    // missed its 83 ms (a fresh-clone run).
    @Cron(NEVER, { name: 'above' })
    @OnOneInstance({ ttl: '3s' })
    @WithoutOverlapping({ ttl: '500ms' })
    async above(label = 'tick'): Promise<string> {
      this.current = this.locks.current();
      this.runs.push(label);
      if (label === 'long') await new Promise<void>((resolve) => (this.release = resolve));
      return label;
    }

    // @Cron below: our wrapper must carry its metadata.
    @WithoutOverlapping({ key: 'below-job' })
    @Interval('below', 3_600_000)
    async below(): Promise<void> {
      this.runs.push('below');
    }

    @OnOneInstance({ key: 'once', ttl: 3_000 })
    @Timeout('timeout', 3_600_000)
    async once(): Promise<number> {
      this.runs.push('once');
      return 7;
    }
  }

  it('keep the @nestjs/schedule metadata in either order, and run when called directly', async () => {
    const app = await start([Jobs]);
    const registry = app.get(SchedulerRegistry);
    expect(registry.getCronJob('above')).toBeDefined();
    expect(registry.getInterval('below')).toBeDefined();
    expect(registry.getTimeout('timeout')).toBeDefined();
    const jobs = app.get(Jobs);
    // fireOnTick() does not wait for the (locked, so asynchronous) job. A claim of the owner lease
    // answered later than a sixth of its ttl skips the tick (owner-uncertain, by design): on a
    // loaded machine, fired again.
    const uncertain = () => app.logs.lines.filter((line) => line.message.includes('could not be sure that no other one ran this tick')).length;
    for (let fired = 0; fired < 5 && jobs.runs.length === 0; fired++) {
      const skipped = uncertain();
      await registry.getCronJob('above').fireOnTick();
      await expect.poll(() => jobs.runs.length > 0 || uncertain() > skipped).toBe(true);
    }
    expect(jobs.runs).toEqual(['tick']);
    expect(await jobs.below()).toBeUndefined();
    expect(await jobs.once()).toBe(7);
    expect(jobs.runs).toEqual(['tick', 'below', 'once']);
    expect(jobs.above.name).toBe('above');
  });

  it('hold the run lock during the run, renewed past its ttl, with current() giving it', async () => {
    const app = await start([Jobs]);
    const jobs = app.get(Jobs);
    const long = jobs.above('long');
    await sleep(1_200);
    expect(jobs.current?.key).toBe('Jobs.above');
    expect(jobs.current?.held).toBe(true);
    expect(await redis.exists('lock:{Jobs.above}')).toBe(1);
    // A second call meanwhile is skipped, with a debug line saying why.
    expect(await jobs.above('second')).toBeUndefined();
    expect(app.logs.has('debug', 'Skipped Jobs.above: its run lock "Jobs.above" is held')).toBe(true);
    jobs.release!();
    expect(await long).toBe('long');
    expect(jobs.current?.held).toBe(false);
    expect(await redis.exists('lock:{Jobs.above}')).toBe(0);
    // The owner lease stays, renewed between calls (past its 3 s ttl).
    await sleep(3_300);
    expect(await redis.exists('lock:{Jobs.above:owner}')).toBe(1);
    expect(await jobs.above('third')).toBe('third');
  });

  it('run on one instance only, and hand the lease back at a clean shutdown', async () => {
    const first = await start([Jobs]);
    const second = await start([Jobs]);
    expect(await first.get(Jobs).once()).toBe(7);
    expect(await second.get(Jobs).once()).toBeUndefined();
    expect(second.logs.has('debug', 'Skipped Jobs.once: another instance owns the lease "once:owner"')).toBe(true);
    await first.close();
    open.splice(open.indexOf(first), 1);
    expect(await redis.exists('lock:{once:owner}')).toBe(0);
    expect(await second.get(Jobs).once()).toBe(7);
  });

  it('let a running call finish at shutdown before handing the lease back, and skip new calls', async () => {
    const app = await start([Jobs]);
    const jobs = app.get(Jobs);
    const long = jobs.above('long');
    await sleep(100);
    const closing = app.close();
    open.splice(open.indexOf(app), 1);
    await sleep(100);
    expect(await redis.exists('lock:{Jobs.above:owner}')).toBe(1);
    expect(await jobs.above('late')).toBeUndefined();
    jobs.release!();
    await closing;
    expect(await long).toBe('long');
    expect(await redis.exists('lock:{Jobs.above:owner}', 'lock:{Jobs.above}')).toBe(0);
  });

  it('reject a call on an instance Nest did not create, or without an instance', async () => {
    const jobs = new Jobs(undefined as never);
    await expect(jobs.above()).rejects.toThrow(/@OnOneInstance\(\) @WithoutOverlapping\(\) method Jobs\.above has no lock service: the instance must be created by Nest/);
    const unbound = jobs.below;
    await expect(unbound()).rejects.toThrow(/@WithoutOverlapping\(\) method Jobs\.below was called without its instance/);
  });

  it('fail at startup when two jobs share a key, naming both methods', async () => {
    @Injectable()
    class A {
      @WithoutOverlapping({ key: 'shared' })
      async a(): Promise<void> {}
    }
    @Injectable()
    class B {
      @OnOneInstance({ key: 'other' })
      async b(): Promise<void> {}
      @WithoutOverlapping({ key: 'shared' })
      async c(): Promise<void> {}
    }
    const error = await start([A, B]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    expect((error as Error).message).toBe('Lock key "shared" is used by both A.a (@WithoutOverlapping) and B.c (@WithoutOverlapping). Give one of them another key.');
  });

  it('fail at startup when a key equals another job\'s <key>:owner lease', async () => {
    @Injectable()
    class C {
      @OnOneInstance({ key: 'export' })
      async run(): Promise<void> {}
    }
    @LeaderElection('export:owner')
    @Injectable()
    class D {}
    const error = await start([C, D]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    expect((error as Error).message).toContain('C.run (@OnOneInstance) and D (@LeaderElection)');
  });

  it('reject bad options when the class is defined', () => {
    const define = (decorate: () => JobMethodDecorator) => () => {
      class X {
        m(): void {}
      }
      decorate()(X.prototype, 'm', Object.getOwnPropertyDescriptor(X.prototype, 'm')!);
    };
    expect(define(() => WithoutOverlapping({ ttl: '30 seconds' as never }))).toThrow(
      /@WithoutOverlapping\(\) on X\.m: Option "ttl" must be a number of milliseconds or a duration string such as '500ms'.*got "30 seconds"/,
    );
    expect(define(() => OnOneInstance({ ttl: 50 }))).toThrow(InvalidLockOptionsError);
    expect(define(() => OnOneInstance({ key: '' }))).toThrow(/@OnOneInstance\(\) on X\.m: The lock key must not be empty/);
    expect(() => {
      class Y {
        @OnOneInstance({ key: 'b' })
        @WithoutOverlapping({ key: 'a' })
        m(): void {}
      }
      return Y;
    }).toThrow(/@WithoutOverlapping\(\) and @OnOneInstance\(\) on Y\.m share one key; they were given two \("b" and "a"\)/);
    expect(() => LeaderElection('k', { ttl: '2x' as never })(class Z {})).toThrow(/@LeaderElection\(\) on Z: Option "ttl"/);
  });
});

describe('@LeaderElection in one process (two applications)', () => {
  const redis = useRedis();

  const events: string[] = [];
  let failNext = false;
  /** The fencing token of the first term in `events` (a key's tokens start at the clock). */
  const firstTerm = (): number => Number(/ acquired (\d+)$/.exec(events[0]!)![1]);

  /** An election of key `feed`, each subclass with its own ttl. */
  class FeedElection implements OnLeadershipAcquired, OnLeadershipLost {
    static count = 0;
    readonly id = ++FeedElection.count;
    lock?: Lock;
    /** When onLeadershipLost ran (performance.now()), and the lease's local deadline then. */
    lostAt?: number;
    deadlineWhenLost?: number;
    onLeadershipAcquired(lock: Lock): void {
      events.push(`${this.id} acquired ${lock.fencingToken}`);
      if (failNext) {
        failNext = false;
        throw new Error('feed unreachable');
      }
      this.lock = lock;
    }
    onLeadershipLost(lock: Lock): void {
      this.lostAt = performance.now();
      this.deadlineWhenLost = leaseDeadline(lock);
      events.push(`${this.id} lost ${lock.fencingToken}${lock.signal.aborted ? ' (aborted)' : ''}`);
    }
  }

  @LeaderElection('feed', { ttl: '600ms' })
  @Injectable()
  class Feed extends FeedElection {}

  /**
   * A lease no stall of a loaded machine outlasts: on 600 ms, a CI run lost a term while the test
   * watched for a second leader (three events where one was expected), which the lease allows.
   */
  @LeaderElection('feed', { ttl: '3s' })
  @Injectable()
  class SteadyFeed extends FeedElection {}

  // Before, not after: the applications of the previous test close after its own afterEach.
  beforeEach(() => {
    events.length = 0;
    failNext = false;
  });

  const waitFor = async (check: () => boolean, ms = 5_000): Promise<void> => {
    const until = performance.now() + ms;
    while (!check()) {
      if (performance.now() > until) throw new Error(`timed out; events: ${events.join(', ')}`);
      await sleep(20);
    }
  };

  it('elects one leader, renews it past its ttl, and hands over at close', async () => {
    const a = await start([SteadyFeed]);
    await waitFor(() => events.length === 1);
    const b = await start([SteadyFeed]);
    const [leaderId, , token] = events[0]!.split(' ');
    const [leader, follower] = a.get(SteadyFeed).id === Number(leaderId) ? [a, b] : [b, a];
    // Past its ttl by its renewals, not by the clock: one each third of the ttl, the first half a
    // third to a third in (a random phase), so the fourth comes after its first lease ran out.
    const renewals: number[] = [];
    const counted = leader.get(LockService).events$.subscribe((event) => {
      if (event.type === 'renewed' && event.key === 'feed') renewals.push(event.fencingToken!);
    });
    await waitFor(() => renewals.length >= 4, 15_000);
    counted.unsubscribe();
    // One leader all along, renewing the term it was elected to; the follower's tries all refused.
    expect(renewals.every((renewed) => renewed === Number(token))).toBe(true);
    expect(events).toHaveLength(1);
    expect(leader.get(SteadyFeed).lock!.held).toBe(true);
    const leaderToken = (leader.get(SteadyFeed).lock as unknown as { token: string }).token;
    await leader.close();
    open.splice(open.indexOf(leader), 1);
    // Counted from here: the follower's tries once the lease was given back.
    const tries = countAttempts(follower.get(LockService));
    // Told through the signal first (a shutdown reason), then onLeadershipLost, then handed back.
    expect(events[1]).toBe(`${leaderId} lost ${token} (aborted)`);
    // Handed back in Redis before close() resolved (the follower may already hold it).
    expect(await redis.get('lock:{feed}')).not.toBe(leaderToken);
    await waitFor(() => events.length === 3);
    // At the follower's next try (every ttl/3): the first try after the hand-back took it (none
    // at all when a try sent before it reached Redis after). A lease left to run out (3 s)
    // would have refused two tries or more.
    expect(tries.count).toBeLessThanOrEqual(1);
    tries.stop();
    expect(events[2]).toBe(`${follower.get(SteadyFeed).id} acquired ${Number(token) + 1}`);
    expect(await redis.exists('lock:{feed}')).toBe(1);
  });

  it('steps down when onLeadershipAcquired throws, and tries again', async () => {
    failNext = true;
    const a = await start([Feed]);
    await waitFor(() => events.length >= 3);
    const id = a.get(Feed).id;
    // The term is over when the instance steps down: onLeadershipLost sees its signal aborted.
    const term = firstTerm();
    expect(events.slice(0, 3)).toEqual([`${id} acquired ${term}`, `${id} lost ${term} (aborted)`, `${id} acquired ${term + 1}`]);
    expect(a.logs.has('error', 'onLeadershipAcquired of Feed threw (feed unreachable); stepping down.')).toBe(true);
  });

  it('calls onLeadershipLost with an aborted signal when the lease is taken away', async () => {
    const a = await start([Feed]);
    await waitFor(() => events.length === 1);
    await redis.del('lock:{feed}');
    await waitFor(() => events.length >= 2);
    expect(events[1]).toBe(`${a.get(Feed).id} lost ${firstTerm()} (aborted)`);
    await waitFor(() => events.length >= 3);
    expect(events[2]).toBe(`${a.get(Feed).id} acquired ${firstTerm() + 1}`);
  });

  it('tells the leader when Redis stops answering, and still shuts down promptly', async () => {
    const server = await startRedisServer();
    try {
      const logs = new CapturedLogs();
      @Module({ imports: [RedisLockModule.forRoot({ redis: server.url, shutdownTimeout: 500 })], providers: [Feed] })
      class OwnRedisModule {}
      const moduleRef = await Test.createTestingModule({ imports: [OwnRedisModule] }).setLogger(logs).compile();
      await moduleRef.init();
      await waitFor(() => events.length === 1);
      const feed = moduleRef.get(Feed);
      const lease = feed.lock!;
      server.pause();
      await waitFor(() => events.length === 2, 5_000);
      // Told by the local lease deadline (ttl 600 ms), with no answer from Redis: the loss is
      // `expired`, not a refused renewal, and came no earlier than the deadline.
      expect(events[1]).toBe(`${feed.id} lost ${firstTerm()} (aborted)`);
      expect(lease.signal.reason).toBeInstanceOf(LockLostError);
      expect((lease.signal.reason as LockLostError).reason).toBe('expired');
      expect(feed.lostAt!).toBeGreaterThanOrEqual(feed.deadlineWhenLost!);
      // Redis stays frozen until the finally below, so close() resolving at all shows that it
      // did not wait for an answer (shutdownTimeout, 500 ms, ended the waits); the test's own
      // timeout stops a hang.
      await moduleRef.close();
      expect(events).toHaveLength(2);
    } finally {
      server.resume();
      await server.stop();
    }
  });

  it('refuses a request-scoped election class', async () => {
    @LeaderElection('scoped')
    @Injectable({ scope: Scope.REQUEST })
    class Scoped {}
    await expect(start([Scoped])).rejects.toThrow(/@LeaderElection\(\) on Scoped: the class must be a singleton provider/);
  });
});

describe('durations and await using', () => {
  const redis = useRedis();

  it('takes durations in module and call options', async () => {
    const app = await start([], '2s');
    const locks = app.get(LockService);
    const lock = await locks.acquire('d', { ttl: '1.5s' });
    expect(await redis.pttl('lock:{d}')).toBeGreaterThan(1_000);
    expect(await redis.pttl('lock:{d}')).toBeLessThanOrEqual(1_500);
    await lock.release();
    await expect(locks.acquire('x', { waitTimeout: '1 min' as never })).rejects.toThrow(/Option "waitTimeout" must be a number of milliseconds or a duration string/);
  });

  it('holds a 30-day lease without overflowing a timer', async () => {
    const app = await start([]);
    const locks = app.get(LockService);
    // Past Node's timer limit: no timer may overflow (Node would warn, and fire it after 1 ms).
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const month = await locks.acquire('month', { ttl: '30d' });
      expect(await redis.pttl('lock:{month}')).toBeGreaterThan(29 * 86_400_000);
      await sleep(50);
      expect(month.held).toBe(true);
      expect(month.signal.aborted).toBe(false);
      await month.release();
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('releases at the end of an await using scope, a nested handle releasing nothing', async () => {
    const app = await start([]);
    const locks = app.get(LockService);
    let outer: Lock | undefined;
    {
      await using lock = await locks.acquire('scoped');
      outer = lock;
      expect(await redis.exists('lock:{scoped}')).toBe(1);
    }
    expect(outer.held).toBe(false);
    expect(await redis.exists('lock:{scoped}')).toBe(0);

    await locks.using('chain', async (chainLock) => {
      let nestedHandle: Lock | undefined;
      {
        await using nested = await locks.acquire('chain');
        nestedHandle = nested;
        expect(nested.fencingToken).toBe(chainLock.fencingToken);
      }
      expect(nestedHandle.held).toBe(false);
      expect(chainLock.held).toBe(true);
      expect(await redis.exists('lock:{chain}')).toBe(1);
    });
    expect(await redis.exists('lock:{chain}')).toBe(0);
  });
});
