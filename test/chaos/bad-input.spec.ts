import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import {
  InvalidLockOptionsError,
  LockKeyError,
  Locked,
  LockService,
  RedisLockError,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../../lib/index.js';
import { CapturedLogs, createLockApp } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { report } from './support/report.js';

@Injectable()
class Orders {
  @Locked('order:<0.id>')
  async pay(_order: { id: unknown }): Promise<string> {
    return 'paid';
  }
}

type Case = [name: string, run: (locks: LockService, orders: Orders) => unknown, error: new (...args: never[]) => Error, message: RegExp];

const cases: Case[] = [
  ['ttl of the wrong type', (l) => l.acquire('k', { ttl: '1000' as never }), InvalidLockOptionsError, /Option "ttl" .*got "1000"/],
  ['negative ttl', (l) => l.acquire('k', { ttl: -1 }), InvalidLockOptionsError, /Option "ttl" .*got -1/],
  ['NaN ttl', (l) => l.acquire('k', { ttl: Number.NaN }), InvalidLockOptionsError, /Option "ttl" .*got NaN/],
  ['Infinity ttl', (l) => l.acquire('k', { ttl: Infinity }), InvalidLockOptionsError, /Option "ttl" .*got Infinity/],
  ['zero ttl', (l) => l.acquire('k', { ttl: 0 }), InvalidLockOptionsError, /Option "ttl" .*got 0/],
  ['huge ttl', (l) => l.acquire('k', { ttl: 2 ** 40 }), InvalidLockOptionsError, /Option "ttl" .*from 100 to 31536000000 ms, got 1099511627776/],
  ['a duration with an unknown unit', (l) => l.acquire('k', { ttl: '10w' as never }), InvalidLockOptionsError, /Option "ttl" must be a number of milliseconds or a duration string such as '500ms'.*got "10w"/],
  ['a waitTimeout past the timer limit', (l) => l.acquire('k', { waitTimeout: '30d' }), InvalidLockOptionsError, /Option "waitTimeout" .*from 0 to 2147483647 ms, or Infinity, got "30d"/],
  ['renewInterval not below ttl', (l) => l.acquire('k', { ttl: 1_000, renewInterval: 1_000 }), InvalidLockOptionsError, /Option "renewInterval" .*below ttl 1000/],
  ['negative waitTimeout', (l) => l.acquire('k', { waitTimeout: -5 }), InvalidLockOptionsError, /Option "waitTimeout" .*got -5/],
  ['NaN waitTimeout', (l) => l.tryAcquire('k', { waitTimeout: Number.NaN }), InvalidLockOptionsError, /Option "waitTimeout" .*got NaN/],
  ['autoRenew of the wrong type', (l) => l.using('k', () => 1, { autoRenew: 'yes' as never }), InvalidLockOptionsError, /Option "autoRenew" must be a boolean, got "yes"/],
  ['a signal that is not an AbortSignal', (l) => l.acquire('k', { signal: {} as never }), InvalidLockOptionsError, /Option "signal" must be an AbortSignal/],
  ['options that are not an object', (l) => l.acquire('k', 'fast' as never), InvalidLockOptionsError, /Option "options"/],
  ['a misspelt option name', (l) => l.using('k', () => 1, { waitTimout: 0 } as never), InvalidLockOptionsError, /Option "waitTimout" .*no option of a lock call/],
  ['an empty key', (l) => l.acquire(''), LockKeyError, /must not be empty/],
  ['a very long key', (l) => l.acquire('k'.repeat(5_000)), LockKeyError, /5000 characters long; at most 1024/],
  ['a number as key', (l) => l.acquire(42 as never), LockKeyError, /must be a string, got number/],
  ['undefined as key', (l) => l.isLocked(undefined as never), LockKeyError, /must be a string, got undefined/],
  ['an object as key', (l) => l.tryAcquire({} as never), LockKeyError, /must be a string, got object/],
  ['undefined argument in a template', (_l, o) => o.pay(undefined as never), LockKeyError, /Orders\.pay: placeholder <0\.id> .*argument 0 is undefined/],
  ['null argument in a template', (_l, o) => o.pay(null as never), LockKeyError, /argument 0 is null/],
  ['an object where the template needs a primitive', (_l, o) => o.pay({ id: { nested: true } }), LockKeyError, /argument 0\.id is an object/],
  ['a bad template', () => defineClass('order:<0'), LockKeyError, /@Locked on Bad\.run: the key template "order:<0" is malformed/],
  ['an out-of-range template index', () => defineClass('order:<3>'), LockKeyError, /refers to argument 3, but the method declares 1 parameter/],
  ['a bad @Locked option', () => defineClass('k', { waitTimeout: -1 }), InvalidLockOptionsError, /@Locked on Bad\.run: Option "waitTimeout"/],
  ['a function instead of using() callback', (l) => l.using('k', 42 as never), TypeError, /fn must be a function, got number/],
  ['extending a released lock', async (l) => {
    const lock = await l.acquire('released-then-extended');
    await lock.release();
    await lock.release(); // releasing twice is fine
    return lock.extend();
  }, RedisLockError, /Lock "released-then-extended" was released; acquire it again/],
  ['extending with a bad ttl', async (l) => {
    const lock = await l.acquire('bad-extend');
    try {
      return await lock.extend(-3);
    } finally {
      await lock.release();
    }
  }, InvalidLockOptionsError, /Option "ttl" .*got -3/],
];

function defineClass(template: string, options?: object): void {
  class Bad {
    @Locked(template, options)
    run(id: string): string {
      return id;
    }
  }
  void Bad;
}

describe('chaos: bad input catalogue', () => {
  const redis = useRedis();

  it(`${cases.length} kinds of bad input each get a clear error and leave nothing in Redis`, async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })],
      providers: [Orders],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    const orders = moduleRef.get(Orders);
    let caught = 0;
    for (const [name, run, errorClass, message] of cases) {
      const error = await (async () => run(locks, orders))().then(
        () => new Error(`${name}: no error`),
        (e: unknown) => e,
      );
      expect(error, name).toBeInstanceOf(errorClass);
      expect((error as Error).message, name).toMatch(message);
      caught++;
    }
    await moduleRef.close();
    // Only the fencing counters of the two locks that were really taken remain: they are kept
    // forever unless the module sets fenceRetention (docs/redis-data.md).
    const [, keys] = await redis.scan('0', 'MATCH', '*', 'COUNT', 1_000);
    expect(keys.sort()).toEqual(['lock:{bad-extend}:fence', 'lock:{released-then-extended}:fence']);
    report('bad-input', { cases: cases.length, clearErrors: caught, keysLeftBehind: keys.length, fencingCounters: keys.filter((key) => key.endsWith(':fence')).length });
  });

  it('refuses bad module options at startup and after shutdown refuses new work', async () => {
    const bad: Partial<RedisLockModuleOptions>[] = [{ redis: 'nope' }, { ttl: -1 }, { keyPrefix: 'a{b' }, { shutdownTimeout: Number.NaN }];
    for (const patch of bad) {
      const compiling = Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), ...patch })] })
        .setLogger(new CapturedLogs())
        .compile();
      await expect(compiling).rejects.toBeInstanceOf(InvalidLockOptionsError);
    }
    const app = await createLockApp();
    await app.close();
    await expect(app.locks.acquire('k')).rejects.toThrow(/LockService is shut down/);
    await expect(app.locks.using('k', () => 1)).rejects.toThrow(/LockService is shut down/);
    const [, keys] = await redis.scan('0', 'MATCH', '*', 'COUNT', 1_000);
    expect(keys).toEqual([]);
  });
});

