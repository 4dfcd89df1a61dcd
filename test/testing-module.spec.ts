import { Controller, Injectable, Module, Post, UseInterceptors } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockConflictInterceptor, LockKeyError, LockNotAcquiredError, LockService, RedisLockModule, Locked, WithoutOverlapping, type LockEvent } from '../lib/index.js';
import { InMemoryLocks, ManualClock, RedisLockTestingModule, type RedisLockTestingOptions } from '../lib/testing/index.js';
import { CapturedLogs } from './support/lock-app.js';

@Injectable()
class ReportsService {
  runs = 0;
  constructor(readonly locks: LockService) {}

  @Locked('report:<0>', { waitTimeout: 0 })
  async build(_id: string): Promise<number | undefined> {
    this.runs++;
    return this.locks.current()?.fencingToken;
  }

  @WithoutOverlapping({ key: 'nightly' })
  async nightly(release: Promise<void>): Promise<void> {
    this.runs++;
    await release;
  }
}

@Controller('reports')
class ReportsController {
  @Post()
  @Locked('report:http', { waitTimeout: 0 })
  create(): string {
    return 'created';
  }
}

@Controller('mapped')
@UseInterceptors(LockConflictInterceptor)
class MappedController {
  @Post()
  @Locked('report:http', { waitTimeout: 0 })
  create(): string {
    return 'created';
  }
}

@Module({ providers: [ReportsService], controllers: [ReportsController] })
class ReportsModule {}

@Module({ controllers: [MappedController] })
class MappedModule {}

@Injectable()
class TestConfig {
  readonly ttl = '30s';
}

@Module({ providers: [TestConfig], exports: [TestConfig] })
class TestConfigModule {}

describe('RedisLockTestingModule (nestjs-redis-lock/testing)', () => {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });

  async function open(options: RedisLockTestingOptions = {}, logs = new CapturedLogs()): Promise<{ moduleRef: TestingModule; locks: LockService; logs: CapturedLogs }> {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ isGlobal: true, ...options }), ReportsModule] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    opened.push(moduleRef);
    return { moduleRef, locks: moduleRef.get(LockService), logs };
  }

  it('runs @Locked and job decorators on the in-memory store, without Redis', async () => {
    const store = new InMemoryLocks();
    const { moduleRef, locks } = await open({ locks: store });
    const reports = moduleRef.get(ReportsService);
    expect(await reports.build('a')).toBeGreaterThan(0);
    const held = await locks.acquire('report:b');
    await expect(reports.build('b')).rejects.toBeInstanceOf(LockNotAcquiredError);
    await held.release();
    let finish!: () => void;
    const first = reports.nightly(new Promise<void>((resolve) => (finish = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(reports.nightly(Promise.resolve())).resolves.toBeUndefined(); // skipped: a run is going
    finish();
    await first;
    expect(reports.runs).toBe(2);
  });

  it('maps a busy lock to 409 over HTTP, as the Redis module does', async () => {
    const store = new InMemoryLocks();
    const { moduleRef, locks } = await open({ locks: store });
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const url = `${await app.getUrl()}/reports`;
      expect((await fetch(url, { method: 'POST' })).status).toBe(201);
      const held = await locks.acquire('report:http');
      const busy = await fetch(url, { method: 'POST' });
      expect(busy.status).toBe(409);
      await held.release();
    } finally {
      await app.close();
    }
  });

  it('forRootAsync() takes its options, store included, from a factory with injected dependencies', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const moduleRef = await Test.createTestingModule({
      imports: [
        RedisLockTestingModule.forRootAsync({
          isGlobal: true,
          imports: [TestConfigModule],
          inject: [TestConfig],
          useFactory: async (config: TestConfig) => ({ locks: store, ttl: config.ttl, autoRenew: false }),
        }),
        ReportsModule,
      ],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    opened.push(moduleRef);
    expect(moduleRef.get(InMemoryLocks)).toBe(store);
    const locks = moduleRef.get(LockService);
    const lock = await locks.acquire('async');
    // The global LockService reaches ReportsModule: the call ran under a lock of its own.
    expect(await moduleRef.get(ReportsService).build('a')).toBeGreaterThan(0);
    // The factory's ttl and autoRenew, on the factory's store and clock.
    await store.manualClock.advance('29s');
    expect(lock.held).toBe(true);
    await store.manualClock.advance('2s');
    expect(lock.signal.reason).toMatchObject({ reason: 'expired' });

    // A bad factory result fails at compile, naming the method and the option.
    const refused = (options: object) =>
      Test.createTestingModule({ imports: [RedisLockTestingModule.forRootAsync({ useFactory: () => options as never })] })
        .setLogger(new CapturedLogs())
        .compile()
        .catch((e: unknown) => e);
    expect(String(await refused({ locks: {} }))).toMatch(/RedisLockTestingModule\.forRootAsync\(\): Option "locks" must be an InMemoryLocks instance/);
    expect(String(await refused({ redis: 'redis://localhost' }))).toMatch(/forRootAsync\(\): Option "redis" must be left out here: locks are kept in memory/);
    expect(await refused({ ttl: 0 })).toBeInstanceOf(InvalidLockOptionsError);
  });

  it.each(['forRoot', 'forRootAsync'] as const)('globalInterceptor: false installs no APP_INTERCEPTOR; @UseInterceptors(LockConflictInterceptor) maps per controller (%s)', async (method) => {
    const store = new InMemoryLocks();
    const testing =
      method === 'forRoot'
        ? RedisLockTestingModule.forRoot({ locks: store, isGlobal: true, globalInterceptor: false })
        : RedisLockTestingModule.forRootAsync({ isGlobal: true, globalInterceptor: false, useFactory: () => ({ locks: store }) });
    const moduleRef = await Test.createTestingModule({ imports: [testing, ReportsModule, MappedModule] })
      .setLogger(new CapturedLogs())
      .compile();
    opened.push(moduleRef);
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const base = await app.getUrl();
      const held = await moduleRef.get(LockService).acquire('report:http');
      expect((await fetch(`${base}/mapped`, { method: 'POST' })).status).toBe(409);
      expect((await fetch(`${base}/reports`, { method: 'POST' })).status).toBe(500);
      await held.release();
      expect((await fetch(`${base}/reports`, { method: 'POST' })).status).toBe(201);
    } finally {
      await app.close();
    }
  });

  it('moves leases, renewals and waits with a manual clock, without real waiting', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const clock = store.manualClock;
    expect(clock).toBeInstanceOf(ManualClock);
    const a = await open({ locks: store, ttl: '30s' });
    const b = await open({ locks: store, ttl: '30s' });
    const events: LockEvent['type'][] = [];
    a.locks.events$.subscribe((event) => events.push(event.type));

    // The watchdog renews every 10 s of clock time: two minutes later the lock is still held.
    const renewed = await a.locks.acquire('job');
    await clock.advance('2m');
    expect(renewed.held).toBe(true);
    expect(events.filter((type) => type === 'renewed').length).toBeGreaterThanOrEqual(11);

    // A wait ends at its waitTimeout, on the clock.
    const waiting = b.locks.acquire('job', { waitTimeout: '5s' }).catch((e: unknown) => e);
    await clock.advance('4s');
    expect(await Promise.race([waiting, 'still waiting'])).toBe('still waiting');
    await clock.advance('2s');
    expect(await waiting).toBeInstanceOf(LockNotAcquiredError);
    await renewed.release();

    // A lease nobody renews runs out exactly when the clock passes it.
    const unrenewed = await a.locks.acquire('lease', { autoRenew: false });
    await clock.advance('29s');
    expect(unrenewed.signal.aborted).toBe(false);
    await clock.advance('1s');
    expect(unrenewed.signal.reason).toMatchObject({ reason: 'expired' });
    expect((await b.locks.tryAcquire('lease'))?.held).toBe(true);
  });

  it('reports a lock whose renewal is refused once it was taken away, at the next tick', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const { locks } = await open({ locks: store, ttl: '30s' });
    const lock = await locks.acquire('stolen');
    store.delete('lock:{stolen}');
    await store.manualClock.advance('10s');
    expect(lock.signal.reason).toMatchObject({ reason: 'refused' });
  });

  it('InMemoryLocks.delete() takes the key the user locked and really steals it, for every kind; a key not held throws', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const { locks } = await open({ locks: store, ttl: '30s' });
    const lock = await locks.acquire('order:7');
    store.delete('order:7');
    // Taken away: another caller gets it at once, and the holder learns at its next renewal.
    const thief = await locks.tryAcquire('order:7');
    expect(thief?.held).toBe(true);
    await store.manualClock.advance('10s');
    expect(lock.signal.reason).toMatchObject({ reason: 'refused' });
    expect(lock.held).toBe(false);
    await thief!.release();

    const reader = await locks.acquire('doc:1', { mode: 'read' });
    const permit = await locks.acquire('exports', { limit: 1 });
    store.delete('doc:1');
    store.delete('exports');
    expect((await locks.tryAcquire('doc:1'))?.held).toBe(true); // a writer: no reader is left
    expect((await locks.tryAcquire('exports', { limit: 1 }))?.held).toBe(true);
    await store.manualClock.advance('10s');
    expect(reader.signal.reason).toMatchObject({ reason: 'refused' });
    expect(permit.signal.reason).toMatchObject({ reason: 'refused' });

    // A module with its own key prefix: the user's key still names its lock.
    const prefixed = await open({ locks: store, ttl: '30s', keyPrefix: 'app:' });
    const own = await prefixed.locks.acquire('job');
    store.delete('job');
    expect((await prefixed.locks.tryAcquire('job'))?.held).toBe(true);
    await store.manualClock.advance('10s');
    expect(own.signal.aborted).toBe(true);

    // Nothing held under that key: a test that thinks it stole a lock learns that it did not.
    expect(() => store.delete('never-locked')).toThrow(LockKeyError);
    expect(() => store.delete('never-locked')).toThrow(/InMemoryLocks\.delete\(key\): no lock is held on "never-locked"/);
    expect(() => store.delete('order:7')).toThrow(/no lock is held/); // released above
    expect(() => store.delete('' as string)).toThrow(/InMemoryLocks\.delete\(key\)/);
  });

  it('shares InMemoryLocks.shared between modules given no store', async () => {
    const a = await open();
    const b = await open();
    const held = await a.locks.acquire('shared-by-default');
    expect(await b.locks.tryAcquire('shared-by-default')).toBeNull();
    await held.release();
  });

  it('warns under NODE_ENV=production that memory locks exclude one process only', async () => {
    const before = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      const logs = new CapturedLogs();
      await open({ locks: new InMemoryLocks() }, logs);
      expect(logs.has('warn', 'exclude callers of this process only')).toBe(true);
    } finally {
      process.env.NODE_ENV = before;
    }
    const quiet = new CapturedLogs();
    await open({ locks: new InMemoryLocks() }, quiet);
    expect(quiet.has('warn', 'in memory')).toBe(false);
  });

  it('validates options as the Redis module does, and refuses what it cannot take', async () => {
    const error = await open({ ttl: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('ttl');
    expect(() => RedisLockTestingModule.forRoot({ redis: 'redis://localhost' } as never)).toThrow(/Option "redis" must be left out here: locks are kept in memory/);
    expect(() => RedisLockTestingModule.forRoot({ locks: {} as never })).toThrow(/Option "locks" must be an InMemoryLocks instance/);
    expect(() => RedisLockTestingModule.forRoot({ globalInterceptor: 'no' as never })).toThrow(/RedisLockTestingModule: Option "globalInterceptor" must be true or false, got "no"/);
    expect(() => RedisLockModule.forRootAsync({ isGlobal: 1 as never, useFactory: () => ({ redis: 'redis://localhost' }) })).toThrow(/RedisLockModule: Option "isGlobal" must be true or false, got 1/);
    expect(() => new InMemoryLocks().manualClock).toThrow(/runs on the system clock/);
    await expect(new ManualClock().advance('soon' as never)).rejects.toThrow(/advance\(duration\)/);
  });
});
