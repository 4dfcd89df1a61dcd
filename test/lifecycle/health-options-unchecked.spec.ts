import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/** The indicator of a started application (closed after each test). */
async function openHealth(): Promise<RedisLockHealthIndicator> {
  moduleRef = await Test.createTestingModule({
    imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), TerminusModule],
    providers: [RedisLockHealthIndicator],
  })
    .setLogger(new CapturedLogs())
    .compile();
  await moduleRef.init();
  return moduleRef.get(RedisLockHealthIndicator);
}

/** `accepted: <the result's keys>`, `refused: <option>` when refused naming isHealthy, or the error. */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    return `accepted: ${Object.keys((await call()) as object).join(', ')}`;
  } catch (error) {
    const named = error instanceof InvalidLockOptionsError && error.message.includes('RedisLockHealthIndicator.isHealthy');
    return named ? `refused: ${error.option}` : `${(error as Error).constructor.name}: ${(error as Error).message}`;
  }
}

let moduleRef: TestingModule | undefined;
afterEach(async () => {
  await moduleRef?.close();
  moduleRef = undefined;
});

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
  it('refuses each with an InvalidLockOptionsError naming isHealthy and the option, as it does for timeout', async () => {
    const health = await openHealth();
    // The one that is checked today:
    expect(await outcome(() => health.isHealthy('locks', { timeout: 0 }))).toBe('refused: timeout');
    // A duration, as every duration option takes (docs/jobs-and-leaders.md); up to 60 s.
    expect(await outcome(() => health.isHealthy('locks', { timeout: '2s' }))).toBe('accepted: locks');
    expect(await outcome(() => health.isHealthy('locks', { timeout: '2m' }))).toBe('refused: timeout');

    const outcomes = {
      requireAllNodes: await outcome(() => health.isHealthy('locks', { requireAllNodes: 'false' as never })),
      options: await outcome(() => health.isHealthy('locks', null as never)),
    };
    // Before the fix: { requireAllNodes: 'accepted', options: "TypeError: Cannot read properties of null (reading 'timeout')" }.
    expect(outcomes).toEqual({ requireAllNodes: 'refused: requireAllNodes', options: 'refused: options' });
  });
});

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
  it('refuses it (and options given as the key) with an InvalidLockOptionsError naming isHealthy', async () => {
    const health = await openHealth();
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
