import { Module, Scope } from '@nestjs/common';
import { ContextIdFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// Found by review: an object with @Locked methods that a provider hands out again in a later
// application of the same process (one module-level object, given by `useValue` or returned by a
// factory: the pattern of a test suite that builds an application per test) kept the LockService
// of the first application, closed since, and every call of the next one rejected with
// "LockService is shut down". The service was only given to an object that had none.
describe('an object with @Locked methods given to one application, then to the next', () => {
  const redis = useRedis();

  class Ledger {
    @Locked('ledger:<0>')
    async post(id: string): Promise<number> {
      return redis.exists(`lock:{ledger:${id}}`);
    }
  }

  it.each([
    ['useValue', (shared: Ledger) => ({ provide: 'LEDGER', useValue: shared })],
    ['a singleton useFactory', (shared: Ledger) => ({ provide: 'LEDGER', useFactory: () => shared })],
    ['a request-scoped useFactory', (shared: Ledger) => ({ provide: 'LEDGER', scope: Scope.REQUEST, useFactory: () => shared })],
  ] as const)('runs its calls under the lock in each application (%s)', async (_how, provider) => {
    const shared = new Ledger();
    for (let app = 0; app < 2; app++) {
      @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], providers: [provider(shared)] })
      class AppModule {}
      const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
      await ref.init();
      try {
        const ledger = await ref.resolve<Ledger>('LEDGER', ContextIdFactory.create());
        expect(ledger).toBe(shared);
        // Before: the second application's call rejected ("LockService is shut down").
        expect(await ledger.post(`a${app}`)).toBe(1);
      } finally {
        await ref.close();
      }
    }
  });
});
