import { Injectable, Module, Scope } from '@nestjs/common';
import { ContextIdFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review. With two `RedisLockModule.forRoot()` in one application (a global one, and a
 * feature module's own, allowed when neither runs jobs or elections), a class provider of the
 * feature module gets the feature module's `LockService` (Nest injects it, as it resolves any
 * dependency: the module's own imports first), but a provider made by `useFactory` or given by
 * `useValue` got the service of whichever module initialised first. Instances of one class in one
 * module then locked under different key prefixes, or on different Redis servers, and did not
 * exclude each other.
 */
describe('a @Locked provider made by useFactory or useValue, with two RedisLockModule instances', () => {
  const redis = useRedis();

  class Accounts {
    /** The lock key held while it runs: its prefix says which module's service took it. */
    @Locked('acct:<0>')
    async deposit(id: string): Promise<string[]> {
      return redis.keys(`*{acct:${id}}`);
    }
  }
  @Injectable({ scope: Scope.REQUEST })
  class ClassAccounts extends Accounts {}

  it('gets the LockService its own module sees, as a class provider does', async () => {
    @Module({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), keyPrefix: 'feature:' })],
      providers: [
        ClassAccounts,
        { provide: 'REQUEST_FACTORY', scope: Scope.REQUEST, useFactory: () => new Accounts() },
        { provide: 'TRANSIENT_FACTORY', scope: Scope.TRANSIENT, useFactory: () => new Accounts() },
        { provide: 'SINGLETON_FACTORY', useFactory: () => new Accounts() },
        { provide: 'VALUE', useValue: new Accounts() },
      ],
      exports: [ClassAccounts, 'REQUEST_FACTORY', 'TRANSIENT_FACTORY', 'SINGLETON_FACTORY', 'VALUE'],
    })
    class FeatureModule {}
    @Module({ imports: [FeatureModule], exports: [FeatureModule] })
    class FeatureHost {}
    const ref = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true, keyPrefix: 'global:' }), FeatureHost] })
      .setLogger(new CapturedLogs())
      .compile();
    await ref.init();
    try {
      const made = {
        class: await ref.resolve<Accounts>(ClassAccounts, ContextIdFactory.create()),
        requestFactory: await ref.resolve<Accounts>('REQUEST_FACTORY', ContextIdFactory.create()),
        transientFactory: await ref.resolve<Accounts>('TRANSIENT_FACTORY'),
        singletonFactory: ref.get<Accounts>('SINGLETON_FACTORY'),
        value: ref.get<Accounts>('VALUE'),
      };
      const held: Record<string, string[]> = {};
      for (const [name, instance] of Object.entries(made)) held[name] = await instance.deposit(name);
      // Before: the class provider's under 'feature:', every other one under 'global:'.
      expect(held).toEqual(Object.fromEntries(Object.keys(made).map((name) => [name, [`feature:{acct:${name}}`]])));
    } finally {
      await ref.close();
    }
  });
});
