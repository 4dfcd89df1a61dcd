import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review. Same bar as test/lifecycle/locked-ttl-under-wait-for-replicas-error-names-no-method.spec.ts:
 * a @Locked option the module can never serve is refused at startup, or the call's error names
 * "@Locked on <Class.method>". In quorum mode a `@Locked(key, { limit })` (semaphore),
 * `{ mode: 'read' }` or `{ fairness: 'barging' }` passes the class definition and the startup
 * (lib/scheduling/lock-scheduling.explorer.ts checks a @Locked method's ttl only), then every call
 * fails with UnsupportedLockKindError / InvalidLockOptionsError naming the option and the *key*
 * ("sem:x", a different one per argument) but not the decorated method (lib/core/engine/locked-call.ts
 * `namingCall` names the method for LockKeyError only).
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

@Injectable()
class Exports {
  @Locked('s28-sem:<0>', { limit: 3 })
  async semaphore(_id: string): Promise<string> {
    return 'ran';
  }
  @Locked('s28-read:<0>', { mode: 'read' })
  async read(_id: string): Promise<string> {
    return 'ran';
  }
  @Locked('s28-barging:<0>', { fairness: 'barging' })
  async barging(_id: string): Promise<string> {
    return 'ran';
  }
}

describe('@Locked options quorum mode cannot serve', () => {
  const quorum = useQuorumNodes();

  for (const method of ['semaphore', 'read', 'barging'] as const) {
    it(`are refused naming @Locked and the method (at startup, or at least in the call error): ${method}`, async () => {
      @Module({ imports: [RedisLockModule.forRoot({ redis: quorum.servers.map((server) => server.url) })], providers: [Exports] })
      class AppModule {}
      let failure: unknown;
      try {
        const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
        closers.push(() => ref.close());
        await ref.init();
        await ref.get(Exports)[method]('x');
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(RedisLockError);
      // Today e.g.: 'Semaphores (option "limit", lock "s28-sem:x") are not supported in quorum mode ...'
      expect((failure as Error).message).toMatch(new RegExp(`@Locked.*Exports\\.${method}`));
    });
  }
});
