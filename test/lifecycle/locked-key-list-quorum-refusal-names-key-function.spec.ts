import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review (thirty-eighth session). The startup refuses a `@Locked` method whose options
 * quorum mode cannot serve (a semaphore, barging), naming the method and its key template
 * (test/lifecycle/locked-kind-quorum-cannot-serve-error-names-no-method.spec.ts). A method locking
 * an array of templates, a multi-key lock, was said to have a key function: `lock "(its key
 * function)"`, sending its author to look for a function that is not there. Its templates are
 * named now, as `lock.name` names them (joined with `,`).
 */
@Injectable()
class SemaphoreTransfers {
  @Locked(['s38-acct:<0>', 's38-acct:<1>'], { limit: 2 })
  async move(_from: string, _to: string): Promise<string> {
    return 'ran';
  }
}

@Injectable()
class BargingTransfers {
  @Locked(['s38-acct:<0>', 's38-acct:<1>'], { fairness: 'barging' })
  async move(_from: string, _to: string): Promise<string> {
    return 'ran';
  }
}

describe('a @Locked method over an array of key templates that quorum mode cannot serve', () => {
  const quorum = useQuorumNodes();

  for (const provider of [SemaphoreTransfers, BargingTransfers]) {
    it(`is refused at startup naming its templates, not a key function: ${provider.name}`, async () => {
      @Module({ imports: [RedisLockModule.forRoot({ redis: quorum.servers.map((server) => server.url) })], providers: [provider] })
      class AppModule {}
      const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
      const failure = await ref.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      await ref.close();
      expect((failure as Error | undefined)?.message).toMatch(new RegExp(`^@Locked on ${provider.name}\\.move: .*quorum mode`));
      // Before: lock "(its key function)".
      expect((failure as Error).message).not.toContain('key function');
      expect((failure as Error).message).toContain('lock "s38-acct:<0>,s38-acct:<1>"');
    });
  }
});
