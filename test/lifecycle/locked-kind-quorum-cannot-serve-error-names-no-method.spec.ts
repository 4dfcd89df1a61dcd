import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review. Same bar as test/lifecycle/locked-ttl-under-wait-for-replicas-error-names-no-method.spec.ts:
 * a @Locked option the module can never serve is refused at startup, naming "@Locked on
 * <Class.method>". In quorum mode a `@Locked(key, { limit })` (semaphore), `{ mode: 'read' }` or
 * `{ fairness: 'barging' }` passed the class definition and the startup (the explorer checked a
 * @Locked method's ttl only), then every call failed with an error naming the option and the
 * *key* ("sem:x", a different one per argument) but not the decorated method. Now the startup
 * refuses it.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

@Injectable()
class Semaphore {
  @Locked('s28-sem:<0>', { limit: 3 })
  async run(_id: string): Promise<string> {
    return 'ran';
  }
}

@Injectable()
class Read {
  @Locked('s28-read:<0>', { mode: 'read' })
  async run(_id: string): Promise<string> {
    return 'ran';
  }
}

@Injectable()
class Barging {
  @Locked('s28-barging:<0>', { fairness: 'barging' })
  async run(_id: string): Promise<string> {
    return 'ran';
  }
}

describe('@Locked options quorum mode cannot serve', () => {
  const quorum = useQuorumNodes();

  for (const provider of [Semaphore, Read, Barging]) {
    it(`are refused at startup naming @Locked and the method: ${provider.name}`, async () => {
      @Module({ imports: [RedisLockModule.forRoot({ redis: quorum.servers.map((server) => server.url) })], providers: [provider] })
      class AppModule {}
      let phase = 'compile';
      let failure: unknown;
      try {
        const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
        closers.push(() => ref.close());
        phase = 'init';
        await ref.init();
        phase = 'call';
        await ref.get<{ run(id: string): Promise<string> }>(provider).run('x');
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(RedisLockError);
      expect(phase).not.toBe('call');
      expect((failure as Error).message).toMatch(new RegExp(`^@Locked on ${provider.name}\\.run: .*quorum mode`));
    });
  }
});
