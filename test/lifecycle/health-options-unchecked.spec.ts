import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review. `RedisLockHealthIndicator.isHealthy(key?, { timeout?, requireAllNodes? })`
 * checks `timeout` and refuses a bad one with an `InvalidLockOptionsError` naming
 * `RedisLockHealthIndicator.isHealthy` (test/ops/terminus.spec.ts), but not the rest
 * (lib/terminus/redis-lock.health.ts, `isHealthy`): `requireAllNodes` is used for its truthiness,
 * so `requireAllNodes: 'false'` (a value read from the environment, a common health-check
 * setting) silently turns the strict mode ON (in quorum mode, `down` as soon as one node of three
 * fails, the pod restarted for a degradation the quorum tolerates); and `null` options fail with a
 * bare `TypeError: Cannot read properties of null (reading 'timeout')`.
 */
describe('RedisLockHealthIndicator.isHealthy() with bad arguments', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('refuses each with an InvalidLockOptionsError naming isHealthy and the option, as it does for timeout', async () => {
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
        await call();
        return 'accepted';
      } catch (error) {
        const named = error instanceof InvalidLockOptionsError && error.message.includes('RedisLockHealthIndicator.isHealthy');
        return named ? `refused: ${error.option}` : `${(error as Error).constructor.name}: ${(error as Error).message}`;
      }
    };
    // The one that is checked today:
    expect(await outcome(() => health.isHealthy('locks', { timeout: 0 }))).toBe('refused: timeout');
    // A duration, as every duration option takes (docs/jobs-and-leaders.md); up to 60 s.
    expect(await outcome(() => health.isHealthy('locks', { timeout: '2s' }))).toBe('accepted');
    expect(await outcome(() => health.isHealthy('locks', { timeout: '2m' }))).toBe('refused: timeout');

    const outcomes = {
      requireAllNodes: await outcome(() => health.isHealthy('locks', { requireAllNodes: 'false' as never })),
      options: await outcome(() => health.isHealthy('locks', null as never)),
    };
    // Before the fix: { requireAllNodes: 'accepted', options: "TypeError: Cannot read properties of null (reading 'timeout')" }.
    expect(outcomes).toEqual({ requireAllNodes: 'refused: requireAllNodes', options: 'refused: options' });
  });
});
