// docs/configuration.md: `waitForReplicas` ... "a call's own `ttl` below twice it is refused with
// `InvalidLockOptionsError`" (d263d04); "Every option is validated when the application starts (or
// when the call is made) and a bad one fails with an `InvalidLockOptionsError` naming the option
// and the value." The review bar: every error names the method and option at fault; a @Locked
// option's bad value is reported as "@Locked on <Class.method>" (lib/core/options/locked-options.ts).
//
// What happens: a `@Locked(key, { ttl: '1s' })` method is accepted when the class is defined and
// when the application starts with `waitForReplicas: { timeout: 1000 }`; every call of it then
// fails (the decorator's own value, not the caller's) with `Option "ttl" must be at least twice
// waitForReplicas.timeout ...`, which names neither @Locked nor the method: in a log of a large
// application nothing says which of its decorated methods to fix, and no call of it can ever
// succeed. Either the startup (which knows the module's waitForReplicas and every @Locked method)
// refuses it, or the call's error says where it comes from.
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

useRedis();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

@Injectable()
class Payouts {
  @Locked('s15g-payouts', { ttl: '1s' })
  async run(): Promise<string> {
    return 'ran';
  }
}

describe('@Locked with a ttl under twice waitForReplicas.timeout', () => {
  it('is refused naming @Locked and the method (at startup, or at least in the call error)', { timeout: 30_000 }, async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), waitForReplicas: { replicas: 1, timeout: 1_000 } })], providers: [Payouts] })
    class AppModule {}
    let failure: unknown;
    try {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
      closers.push(() => moduleRef.close());
      await moduleRef.init();
      await moduleRef.get(Payouts).run();
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(InvalidLockOptionsError);
    expect((failure as InvalidLockOptionsError).option).toBe('ttl');
    // Today: 'Option "ttl" must be at least twice waitForReplicas.timeout (1000 ms): ..., got "1s".'
    expect((failure as Error).message).toMatch(/@Locked.*Payouts\.run/);
  });
});
