import { describe, expect, it } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { watchCommands } from '../support/monitor.js';
import { redisUrl, useRedis } from '../support/redis.js';

const fixture = new URL('./fixtures/close-from-signal-and-code.mjs', import.meta.url);

/**
 * `app.close()` called while a shutdown signal's handler (`enableShutdownHooks()`) closes the
 * application too, as a test's afterAll and a signal, or a bootstrap's handler and Nest's, do:
 * no error, no hang, each lock given back once, nothing left in Redis, the process ends.
 */
describe('app.close() at once from a shutdown signal and from the code', () => {
  const redis = useRedis();

  it('gives each lock back once, logs no error, and the process ends', { timeout: 60_000 }, async () => {
    const key = 'signal-close';
    const watch = await watchCommands(key, redisUrl(), (arg) => arg.includes(`{${key}`));
    let watching = true;
    try {
      const child = spawnFixture(fixture, { REDIS_URL: redisUrl(), KEY: key });
      // However long its start takes on a loaded machine (the test's timeout bounds it).
      await child.line(/^\{"held":true\}$/);
      await expect.poll(() => redis.exists(`lock:{${key}:call}`)).toBe(1);
      child.endWith('go');
      await expect.poll(() => child.exit.code !== undefined, { timeout: 30_000 }).toBe(true);
      const lines = child.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.filter((line) => 'error' in line)).toEqual([]);
      // The lock held by hand is warned of at close: once.
      expect(lines.filter((line) => 'warn' in line).length).toBeLessThanOrEqual(1);
      expect((await redis.keys('*')).filter((name) => !name.endsWith(':fence'))).toEqual([]);
      watching = false;
      await watch.stop();
      // MONITOR lists the commands a script runs too: a release deletes the lock's key, once.
      const deletes = (name: string) => watch.seen.filter(({ args }) => args[0]!.toUpperCase() === 'DEL' && args[1] === `lock:{${name}}`).length;
      expect({ held: deletes(key), call: deletes(`${key}:call`) }).toEqual({ held: 1, call: 1 });
      expect(child.exit.code).not.toBe(1);
    } finally {
      if (watching) await watch.stop();
    }
  });
});
