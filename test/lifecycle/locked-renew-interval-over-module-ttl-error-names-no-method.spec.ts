import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review. The bar of test/lifecycle/locked-ttl-under-wait-for-replicas-error-names-no-method.spec.ts:
 * a @Locked option that can never work with the module's options is refused at startup, or at least
 * the call's error names "@Locked on <Class.method>".
 *
 * `checkLockedOptions` (lib/core/options/locked-options.ts) checks a `renewInterval` given without a
 * `ttl` against a stand-in ttl of max(30 s, 2 x renewInterval), and the startup check of the explorer
 * looks only at `ttl`. With the module's `ttl: '5s'`, `@Locked(key, { renewInterval: '10s' })` is
 * accepted at class definition and at startup; every call then fails (the decorator's own value, not
 * the caller's) with `Option "renewInterval" must be ... got "10s"`, which names no method: the
 * locked-call path (`namingCall`, lib/core/engine/locked-call.ts) adds the method to LockKeyError only.
 */
@Injectable()
class Exports {
  @Locked('s28-export:<0>', { renewInterval: '10s' })
  async run(_id: string): Promise<string> {
    return 'ran';
  }
}

describe('@Locked with a renewInterval (no ttl) above the module ttl', () => {
  useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('is refused naming @Locked and the method (at startup, or at least in the call error)', async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), ttl: '5s' })], providers: [Exports] })
    class AppModule {}
    let failure: unknown;
    try {
      const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
      closers.push(() => ref.close());
      await ref.init();
      await ref.get(Exports).run('a');
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(InvalidLockOptionsError);
    expect((failure as InvalidLockOptionsError).option).toBe('renewInterval');
    // Today: 'Option "renewInterval" must be ..., from 1 to 4947 ms (below ttl 5000 minus the drift margin), got "10s".'
    expect((failure as Error).message).toMatch(/@Locked.*Exports\.run/);
  });
});
