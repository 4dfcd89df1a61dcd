import { Injectable, Module, SetMetadata } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Observable, Subject, interval, lastValueFrom, map, take } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidLockOptionsError,
  LockKeyError,
  LockNotAcquiredError,
  LockService,
  Locked,
  RedisLockError,
  RedisLockModule,
} from '../lib/index.js';
import { CapturedLogs, sleep } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

interface Span {
  key: string;
  start: number;
  end: number;
}

@Injectable()
class AccountsService {
  readonly spans: Span[] = [];
  constructor(readonly locks: LockService) {}

  @Locked('account:<0>', { waitTimeout: 5_000 })
  async deposit(accountId: string, ms: number): Promise<string> {
    const start = performance.now();
    await sleep(ms);
    this.spans.push({ key: accountId, start, end: performance.now() });
    return `deposited:${accountId}`;
  }

  @Locked('user:<0.id>:cart:<1>')
  async checkout(_user: { id: string }, _cart: number): Promise<string | undefined> {
    return this.locks.current()?.key;
  }

  @Locked((order: { id: number }, region: string) => `order:${region}:${order.id}`)
  async ship(_order: { id: number }, _region: string): Promise<number | undefined> {
    return this.locks.current()?.fencingToken;
  }

  @Locked((id: unknown) => id as string)
  async keyed(_id: unknown): Promise<string> {
    return 'ran';
  }

  @Locked('fail:<0>')
  async fail(id: string): Promise<never> {
    throw new RangeError(`bad ${id}`);
  }

  @Locked('sync:<0>')
  double(value: number): number {
    return value * 2;
  }

  @Locked('nested:<0>')
  async outer(id: string): Promise<string> {
    return `outer(${await this.inner(id)})`;
  }

  @Locked('nested:<0>')
  async inner(_id: string): Promise<string> {
    return `inner:${this.locks.current()?.key}`;
  }

  @Locked('busy:<0>', { waitTimeout: 0 })
  async busy(id: string): Promise<string> {
    return id;
  }

  @Locked('skip:<0>', { waitTimeout: 0, onBusy: 'skip' })
  async skipWhenBusy(id: string): Promise<string> {
    return id;
  }

  @Locked('stream:<0>')
  ticks(id: string, count: number): Observable<string> {
    return interval(50).pipe(take(count), map((i) => `${id}:${i}`));
  }

  @Locked('stream:<0>')
  endless(_id: string, source: Subject<number>): Observable<number> {
    return source.asObservable();
  }

  /** Not declared as returning an Observable: the lock is taken at call time. */
  @Locked('lazy:<0>', { ttl: 300 })
  lazy(id: string): any {
    return interval(10).pipe(take(1), map(() => id));
  }

  @SetMetadata('role', 'admin')
  @Locked('meta:<0>')
  @SetMetadata('audit', true)
  async withMetadata(id: string): Promise<string> {
    return id;
  }
}

@Injectable()
class Reporter {
  constructor(private readonly accounts: AccountsService) {}
  report(id: string): Promise<string> {
    return this.accounts.deposit(id, 1);
  }
}

@Module({ providers: [AccountsService, Reporter] })
class AccountsModule {}

describe('@Locked on provider methods', () => {
  const redis = useRedis();
  let moduleRef: TestingModule;
  let accounts: AccountsService;

  let logs: CapturedLogs;

  beforeEach(async () => {
    logs = new CapturedLogs();
    moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), AccountsModule],
    })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    accounts = moduleRef.get(AccountsService);
  });
  afterEach(() => moduleRef?.close());

  it('never overlaps calls with the same argument, and runs different arguments in parallel', async () => {
    await Promise.all([accounts.deposit('a', 120), accounts.deposit('a', 120), accounts.deposit('b', 120)]);
    const [a1, a2] = accounts.spans.filter((s) => s.key === 'a').sort((x, y) => x.start - y.start);
    const b = accounts.spans.find((s) => s.key === 'b')!;
    expect(a2!.start).toBeGreaterThanOrEqual(a1!.end);
    expect(b.start).toBeLessThan(a1!.end);
    expect(await redis.keys('lock:{account:*}')).toEqual([]);
  });

  it('is locked when called from another provider too', async () => {
    const lock = await accounts.locks.acquire('account:x');
    const call = moduleRef.get(Reporter).report('x');
    await sleep(100);
    expect(accounts.spans).toHaveLength(0);
    await lock.release();
    await expect(call).resolves.toBe('deposited:x');
  });

  it('builds keys from property paths and from a key function', async () => {
    expect(await accounts.checkout({ id: 'u1' }, 3)).toBe('user:u1:cart:3');
    await redis.set('lock:{order:eu:9}:fence', '10'); // locked ten times before: one more below
    expect(await accounts.ship({ id: 9 }, 'eu')).toBe(11);
    expect(await redis.get('lock:{order:eu:9}:fence')).toBe('11');
  });

  it.each<[string, () => Promise<unknown>, RegExp]>([
    ['a missing argument', () => (accounts.deposit as any)(), /placeholder <0> needs argument 0, but the method got 0 arguments/],
    ['undefined', () => accounts.deposit(undefined as any, 1), /AccountsService\.deposit: placeholder <0> .* argument 0 is undefined/],
    ['null', () => accounts.deposit(null as any, 1), /argument 0 is null/],
    ['an object', () => accounts.deposit({} as any, 1), /argument 0 is an object/],
    ['a function', () => accounts.deposit((() => 1) as any, 1), /argument 0 is a function/],
    ['a missing property', () => accounts.checkout({} as any, 1), /placeholder <0.id> .* argument 0.id is undefined/],
    ['a key function returning undefined', () => accounts.keyed(undefined), /AccountsService\.keyed: the key function returned a bad key\. The lock key must be a string, got undefined/],
    ['a key function returning an empty key', () => accounts.keyed(''), /AccountsService\.keyed: .*must not be empty/],
    ['a key function returning an object', () => accounts.keyed({}), /got object/],
  ])('fails with LockKeyError on %s, before the body runs and before Redis is touched', async (_case, call, message) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toMatch(message);
    expect(accounts.spans).toHaveLength(0);
    expect(await redis.keys('*')).toEqual([]);
  });

  it('releases the lock when the method throws, and rethrows its own error', async () => {
    await redis.set('lock:{fail:x}:fence', '10');
    const error = await accounts.fail('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe('bad x');
    expect(await redis.exists('lock:{fail:x}')).toBe(0);
    expect(await redis.get('lock:{fail:x}:fence')).toBe('11');
  });

  it('locks a synchronous method for the call, returning a Promise', async () => {
    await redis.set('lock:{sync:21}:fence', '10');
    await expect(accounts.double(21)).resolves.toBe(42);
    expect(await redis.get('lock:{sync:21}:fence')).toBe('11');
  });

  it('re-enters nested @Locked methods on the same key without deadlock', async () => {
    await redis.set('lock:{nested:n}:fence', '10');
    await expect(accounts.outer('n')).resolves.toBe('outer(inner:nested:n)');
    expect(await redis.get('lock:{nested:n}:fence')).toBe('11'); // one acquisition: the inner call re-entered
  });

  it('fails with LockNotAcquiredError when busy, or skips with onBusy: skip', async () => {
    const held = await accounts.locks.acquire('busy:x');
    await expect(accounts.busy('x')).rejects.toBeInstanceOf(LockNotAcquiredError);
    await held.release();
    const skipHeld = await accounts.locks.acquire('skip:x');
    await expect(accounts.skipWhenBusy('x')).resolves.toBeUndefined();
    await skipHeld.release();
    await expect(accounts.skipWhenBusy('x')).resolves.toBe('x');
  });

  it('holds the lock of an Observable from subscription until completion', async () => {
    const stream = accounts.ticks('s', 4);
    await sleep(50);
    expect(await redis.exists('lock:{stream:s}')).toBe(0); // nothing before subscription
    const done = lastValueFrom(stream);
    await sleep(120);
    expect(await redis.exists('lock:{stream:s}')).toBe(1);
    expect(await done).toBe('s:3');
    await sleep(20);
    expect(await redis.exists('lock:{stream:s}')).toBe(0);
  });

  it('releases the lock of an Observable on unsubscribe', async () => {
    const source = new Subject<number>();
    const seen: number[] = [];
    const subscription = accounts.endless('e', source).subscribe((value) => seen.push(value));
    // The lock is taken first, then the method's stream subscribes to the source.
    await expect.poll(() => source.observed, { timeout: 5_000, interval: 10 }).toBe(true);
    source.next(1);
    expect(await redis.exists('lock:{stream:e}')).toBe(1);
    subscription.unsubscribe();
    // The release is on its way once unsubscribed: polled, not read after a guess of its latency.
    await expect.poll(() => redis.exists('lock:{stream:e}'), { timeout: 5_000, interval: 10 }).toBe(0);
    expect(seen).toEqual([1]);
  });

  it('cancels the wait when an Observable is unsubscribed before it got the lock', async () => {
    const held = await accounts.locks.acquire('stream:w');
    const subscription = accounts.ticks('w', 1).subscribe();
    await sleep(50);
    subscription.unsubscribe();
    await held.release();
    await sleep(100);
    // Nobody holds it: the release may have handed it to the cancelled waiter, whose leave passed it on.
    expect(await redis.exists('lock:{stream:w}', 'lock:{stream:w}:queue')).toBe(0);
  });

  it('releases the lock of an undeclared Observable nobody subscribes to within its ttl', async () => {
    const stream = (await accounts.lazy('n')) as Observable<string>;
    expect(await redis.exists('lock:{lazy:n}')).toBe(1);
    await sleep(700);
    expect(await redis.exists('lock:{lazy:n}')).toBe(0);
    expect(logs.has('warn', 'was not subscribed')).toBe(true);
    const late = await lastValueFrom(stream).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(RedisLockError);
    expect((late as Error).message).toMatch(/AccountsService\.lazy|lazy:n/);
  });

  it('keeps the lock of an undeclared Observable subscribed in time until it completes', async () => {
    const stream = (await accounts.lazy('m')) as Observable<string>;
    await sleep(100);
    await expect(lastValueFrom(stream)).resolves.toBe('m');
    // Released once it completed (its release goes out then: no fixed delay on a loaded machine).
    await expect.poll(() => redis.exists('lock:{lazy:m}'), { timeout: 5_000 }).toBe(0);
  });

  it('keeps the metadata other decorators put on the method, and its name', () => {
    const method = AccountsService.prototype.withMetadata;
    expect(Reflect.getMetadata('role', method)).toBe('admin');
    expect(Reflect.getMetadata('audit', method)).toBe(true);
    expect(method.name).toBe('withMetadata');
  });

  it('explains what is wrong when the instance was not created by Nest', async () => {
    const manual = new AccountsService(accounts.locks);
    await expect(manual.busy('x')).rejects.toThrow(/AccountsService\.busy has no LockService: the instance must be created by Nest/);
    const detached = accounts.busy;
    await expect(detached('x')).rejects.toThrow(/called without its instance/);
  });
});

describe('@Locked at class definition', () => {
  const define = (decorate: () => void) => () => decorate();

  it.each<[string, () => void, RegExp]>([
    ['a malformed template', () => { class Bad { @Locked('order:<0') run(id: string) { return id; } } void Bad; }, /@Locked on Bad\.run: the key template "order:<0" is malformed/],
    ['an out-of-range placeholder', () => { class Bad { @Locked('order:<1>') run(id: string) { return id; } } void Bad; }, /@Locked on Bad\.run: .*refers to argument 1, but the method declares 1 parameter/],
    ['a bad ttl', () => { class Bad { @Locked('k', { ttl: -1 }) run() { return 1; } } void Bad; }, /@Locked on Bad\.run: Option "ttl"/],
    ['a bad onBusy', () => { class Bad { @Locked('k', { onBusy: 'wait' as never }) run() { return 1; } } void Bad; }, /@Locked on Bad\.run: Option "onBusy" must be "throw" or "skip", got "wait"/],
    ['a bad waitTimeout', () => { class Bad { @Locked('k', { waitTimeout: Number.NaN }) run() { return 1; } } void Bad; }, /Option "waitTimeout"/],
    ['a bad fencing', () => { class Bad { @Locked('k', { fencing: 'off' as never }) run() { return 1; } } void Bad; }, /@Locked on Bad\.run: Option "fencing" must be a boolean/],
    ['two @Locked', () => { class Bad { @Locked('a') @Locked('b') run() { return 1; } } void Bad; }, /@Locked on Bad\.run: the method is already locked/],
    ['a static method', () => { class Bad { @Locked('a') static run() { return 1; } } void Bad; }, /@Locked on Bad\.run: static methods cannot be locked/],
    ['a template that is not a string', () => { class Bad { @Locked(42 as never) run() { return 1; } } void Bad; }, /@Locked on Bad\.run: the key template must be a non-empty string or a function/],
  ])('throws on %s, naming class and method', (_case, decorate, message) => {
    expect(define(decorate)).toThrow(message);
    expect(define(decorate)).toThrow(RedisLockError);
  });

  it('reports bad options as InvalidLockOptionsError', () => {
    expect(() => { class Bad { @Locked('k', { renewInterval: 0 }) run() { return 1; } } void Bad; }).toThrow(InvalidLockOptionsError);
  });

  it("checks options against each module's defaults: valid under one, refused at the other's startup", async () => {
    @Injectable()
    class Slow {
      // Valid on its own; needs a ttl longer than 25 s plus the drift margin.
      @Locked('slow:<0>', { renewInterval: '25s' })
      async run(id: string): Promise<string> {
        return id;
      }
    }
    const open = async (ttl: '60s' | '10s') => {
      const moduleRef = await Test.createTestingModule({
        imports: [RedisLockModule.forRoot({ redis: redisUrl(), ttl })],
        providers: [Slow],
      })
        .setLogger(new CapturedLogs())
        .compile();
      await moduleRef.init();
      return moduleRef;
    };
    // The method's options object is resolved once per module, never across modules: the module
    // whose ttl the method's renewInterval cannot fit refuses its startup, naming the method
    // (every call would fail), while the other runs it.
    const long = await open('60s');
    try {
      const refused = await open('10s').then(
        async (short) => {
          await short.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(InvalidLockOptionsError);
      expect((refused as Error).message).toMatch(/^@Locked on Slow\.run: Option "renewInterval"/);
      for (let call = 0; call < 2; call++) await expect(long.get(Slow).run('a')).resolves.toBe('a');
    } finally {
      await long.close();
    }
  });
});
