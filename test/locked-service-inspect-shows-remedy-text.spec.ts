import { Injectable } from '@nestjs/common';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Locked, OnOneInstance } from '../lib/index.js';
import { useRedis } from './support/redis.js';
import { closeNow, startJobApp } from './jobs/support.js';

/**
 * Found by review (thirtieth session, fixes). b132a98 made the description of the symbol under
 * which the library injects LockService the remedy of Nest's dependency error ("import
 * RedisLockModule into this module, or give RedisLockModule.forRoot() isGlobal: true"). The
 * property is an own enumerable one of every class with @Locked methods, so every
 * `console.log(service)` / `util.inspect` of such a service in a correctly wired application
 * prints that advice, as if something were wrong. The property is a non-enumerable one now.
 */
describe('a @Locked service in an application that sees RedisLockModule', () => {
  useRedis();

  it('is not shown with the advice meant for a module that does not see RedisLockModule', async () => {
    @Injectable()
    class Billing {
      @Locked('bill')
      async bill(): Promise<string> {
        return 'billed';
      }
    }
    const app = await startJobApp([Billing]);
    try {
      const billing = app.get(Billing);
      expect(await billing.bill()).toBe('billed');
      const shown = inspect(billing, { depth: 0 });
      expect(shown).not.toMatch(/import RedisLockModule/);
    } finally {
      await closeNow(app);
    }
  }, 30_000);

  it('nor is a job service', async () => {
    @Injectable()
    class Nightly {
      @OnOneInstance({ ttl: '10s' })
      async run(): Promise<void> {}
    }
    const app = await startJobApp([Nightly]);
    try {
      expect(inspect(app.get(Nightly), { depth: 0 })).not.toMatch(/import RedisLockModule|nestjs-redis-lock/);
    } finally {
      await closeNow(app);
    }
  }, 30_000);
});
