import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * docs/configuration.md: "A name that is no option (`prefix` for `keyPrefix`, or `permit` for
 * `permits` in a call's options) is refused too". The module's own names are checked, but the
 * object of `waitForReplicas` was read for `replicas` and `timeout` only
 * (lib/core/options/wait-for-replicas.ts): `{ replicas: 1, timout: 300 }` started the application
 * on the default 1000 ms `WAIT`, without a word. The acquisitions then block Redis up to 1 s
 * rather than 300 ms, and every call whose own `ttl` is under 2 s is refused, with a message
 * citing a 1000 ms timeout the configuration does not say anywhere.
 */
describe('waitForReplicas with a name that is no option of it', () => {
  async function start(options: RedisLockModuleOptions): Promise<{ error?: unknown; locks?: LockService; close(): Promise<void> }> {
    try {
      const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot(options)] }).setLogger(new CapturedLogs()).compile();
      await moduleRef.init();
      return { locks: moduleRef.get(LockService), close: () => moduleRef.close() };
    } catch (error) {
      return { error, close: async () => undefined };
    }
  }

  it('{ replicas, timout } (timeout misspelt) is refused naming "waitForReplicas.timout", not run on the default timeout', async () => {
    const app = await start({ redis: redisUrl(), waitForReplicas: { replicas: 1, timout: 300 } as never });
    try {
      if (app.locks) {
        // What happened instead: the 1000 ms default applies, so a 1 s lease (twice the 300 ms
        // meant, as the docs ask) is refused, citing a timeout nobody configured.
        const refused = await app.locks.acquire('k', { ttl: 1_000 }).catch((e: unknown) => e);
        expect((refused as Error).message).not.toContain('(1000 ms)');
      }
      expect(app.error).toBeInstanceOf(InvalidLockOptionsError);
      expect((app.error as InvalidLockOptionsError).option).toBe('waitForReplicas.timout');
      expect((app.error as Error).message).toContain('RedisLockModule.forRoot()');
    } finally {
      await app.close();
    }
  });
});
