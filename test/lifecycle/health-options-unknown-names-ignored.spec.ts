import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review of the configuration a newcomer writes. `isHealthy(key?, { timeout?,
 * requireAllNodes? })` checked the values of its two options (test/lifecycle/health-options-unchecked.spec.ts)
 * but read nothing else (lib/terminus/redis-lock.health.ts): `{ requireAll: true }` (the strict
 * mode misspelt) checked in the lenient mode, and `{ timeoutMs: 300 }` on the default 1000 ms,
 * without a word, unlike every other options object of the package ("A name that is no option
 * ... is refused", docs/configuration.md). And the options given in the key's place,
 * `isHealthy({ timeout: 300 })` (a JavaScript caller, or `as any`), were taken for the key: the
 * result came back under "[object Object]", on the default timeout.
 */
describe('RedisLockHealthIndicator.isHealthy() with a name that is no option of it', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('refuses it (and options given as the key) with an InvalidLockOptionsError naming isHealthy', async () => {
    moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), TerminusModule],
      providers: [RedisLockHealthIndicator],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const health = moduleRef.get(RedisLockHealthIndicator);
    const outcome = async (call: () => Promise<unknown>): Promise<string> => {
      try {
        return `accepted: ${Object.keys((await call()) as object).join(', ')}`;
      } catch (error) {
        const named = error instanceof InvalidLockOptionsError && error.message.includes('RedisLockHealthIndicator.isHealthy');
        return named ? `refused: ${error.option}` : `${(error as Error).constructor.name}: ${(error as Error).message}`;
      }
    };
    expect(await outcome(() => health.isHealthy('locks', { timeout: 300, requireAllNodes: true }))).toBe('accepted: locks');
    const outcomes = {
      requireAll: await outcome(() => health.isHealthy('locks', { requireAll: true } as never)),
      timeoutMs: await outcome(() => health.isHealthy('locks', { timeoutMs: 300 } as never)),
      optionsAsKey: await outcome(() => health.isHealthy({ timeout: 300 } as never)),
    };
    // Before the fix: { requireAll: 'accepted: locks', timeoutMs: 'accepted: locks', optionsAsKey: 'accepted: [object Object]' }.
    expect(outcomes).toEqual({ requireAll: 'refused: requireAll', timeoutMs: 'refused: timeoutMs', optionsAsKey: 'refused: key' });
  });
});
