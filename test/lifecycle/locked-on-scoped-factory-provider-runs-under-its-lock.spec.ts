import { Injectable, Module, Scope } from '@nestjs/common';
import { ContextIdFactory } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// A @Locked method on a request-scoped or transient provider made by useFactory: Nest makes its
// instances after the module's init (per request, per consumer) and injects properties into class
// providers only, so the instances never got their LockService, and every call rejected with
// "the instance must be created by Nest, in a module that imports RedisLockModule".
describe('a @Locked method on a request-scoped or transient provider made by useFactory', () => {
  const redis = useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  class Accounts {
    runs = 0;
    constructor(readonly bank: string) {}
    @Locked('scoped-account:<0>')
    async deposit(id: string): Promise<string> {
      this.runs++;
      expect(await redis.exists(`lock:{scoped-account:${id}}`)).toBe(1);
      return `ran at ${this.bank}`;
    }
  }
  const ACCOUNTS = 'ACCOUNTS';
  const BANK = 'BANK';

  async function start(providers: unknown[]): Promise<TestingModule> {
    @Module({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })],
      providers: [{ provide: BANK, useValue: 'b' }, ...(providers as never[])],
    })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await ref.init();
    closers.push(() => ref.close());
    return ref;
  }

  it('request-scoped, synchronous and async factories: each request gets an instance whose calls run under the lock', async () => {
    const ref = await start([
      { provide: ACCOUNTS, scope: Scope.REQUEST, inject: [BANK], useFactory: (bank: string) => new Accounts(bank) },
      { provide: 'ASYNC_ACCOUNTS', scope: Scope.REQUEST, inject: [BANK], useFactory: async (bank: string) => new Accounts(`${bank}-async`) },
    ]);
    for (const [token, bank] of [[ACCOUNTS, 'b'], ['ASYNC_ACCOUNTS', 'b-async']] as const) {
      const first = await ref.resolve<Accounts>(token, ContextIdFactory.create());
      const second = await ref.resolve<Accounts>(token, ContextIdFactory.create());
      expect(first).not.toBe(second);
      expect(await first.deposit('a1')).toBe(`ran at ${bank}`);
      expect(await second.deposit('a1')).toBe(`ran at ${bank}`);
      expect(first.runs + second.runs).toBe(2);
    }
    expect(await redis.exists('lock:{scoped-account:a1}')).toBe(0);
  });

  // Found by review: Nest awaits whatever thenable a factory returns; one that is not a native
  // Promise (another library's, another realm's) was equipped itself, and its instance was not.
  it('request-scoped, a factory returning a thenable that is not a native Promise', async () => {
    const ref = await start([
      {
        provide: ACCOUNTS,
        scope: Scope.REQUEST,
        inject: [BANK],
        useFactory: (bank: string) => ({ then: (resolve: (made: Accounts) => void) => resolve(new Accounts(`${bank}-thenable`)) }),
      },
    ]);
    const accounts = await ref.resolve<Accounts>(ACCOUNTS, ContextIdFactory.create());
    expect(await accounts.deposit('th1')).toBe('ran at b-thenable');
  });

  it('transient, in a singleton that injects it and resolved on its own', async () => {
    @Injectable()
    class Teller {
      constructor(readonly accounts: Accounts) {}
    }
    const ref = await start([{ provide: Accounts, scope: Scope.TRANSIENT, inject: [BANK], useFactory: (bank: string) => new Accounts(bank) }, Teller]);
    expect(await ref.get(Teller).accounts.deposit('t1')).toBe('ran at b');
    const resolved = await ref.resolve(Accounts);
    expect(resolved).not.toBe(ref.get(Teller).accounts);
    expect(await resolved.deposit('t1')).toBe('ran at b');
  });

  it('leaves what a factory returns without @Locked methods as it is; a frozen instance with them fails its calls, saying so', async () => {
    const made = Object.freeze({ plain: true });
    const ref = await start([
      { provide: 'PLAIN', scope: Scope.REQUEST, useFactory: () => made },
      { provide: 'FROZEN', scope: Scope.REQUEST, inject: [BANK], useFactory: (bank: string) => Object.freeze(new Accounts(bank)) },
    ]);
    expect(await ref.resolve('PLAIN', ContextIdFactory.create())).toBe(made);
    expect(Object.getOwnPropertySymbols(made)).toEqual([]);
    const frozen = await ref.resolve<Accounts>('FROZEN', ContextIdFactory.create());
    const error = await frozen.deposit('f1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toContain('Accounts.deposit');
    expect((error as Error).message).toContain('not frozen');
  });
});
