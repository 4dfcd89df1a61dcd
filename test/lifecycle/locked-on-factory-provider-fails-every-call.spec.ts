import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// A @Locked method on a provider made by useFactory (or given by useValue): Nest does property
// injection only for class providers, so the wrapper never gets its LockService, and every call
// rejects with "the instance must be created by Nest, in a module that imports RedisLockModule"
// although it was, in such a module. The startup says nothing. The job decorators had the same
// gap and now get their orchestrator from the explorer (test/jobs/job-on-factory-provider-...).
describe('a @Locked method on a provider made by useFactory', () => {
  const redis = useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('is refused at startup, naming the method, or runs under its lock', async () => {
    class Accounts {
      runs = 0;
      constructor(readonly config: { bank: string }) {}
      @Locked('account:<0>')
      async deposit(id: string): Promise<string> {
        this.runs++;
        expect(await redis.exists(`lock:{account:${id}}`)).toBe(1);
        return 'ran';
      }
    }
    @Module({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })],
      providers: [{ provide: Accounts, useFactory: () => new Accounts({ bank: 'b' }) }],
    })
    class AppModule {}
    let startup: unknown;
    const ref = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(new CapturedLogs())
      .compile()
      .then(async (compiled) => {
        await compiled.init();
        closers.push(() => compiled.close());
        return compiled;
      })
      .catch((error: unknown) => {
        startup = error;
        return undefined;
      });
    if (ref === undefined) {
      expect(startup).toBeInstanceOf(RedisLockError);
      expect(String((startup as Error).message)).toContain('Accounts.deposit');
      return;
    }
    expect(ref.get(LockService)).toBeInstanceOf(LockService);
    const outcome = await ref.get(Accounts).deposit('a1').then(
      (value) => ({ value }),
      (error: unknown) => ({ error: (error as Error).message }),
    );
    // Fails: { error: '@Locked method Accounts.deposit has no LockService: the instance must be created by Nest, ...' }
    expect(outcome).toEqual({ value: 'ran' });
    expect(ref.get(Accounts).runs).toBe(1);
  });
});
