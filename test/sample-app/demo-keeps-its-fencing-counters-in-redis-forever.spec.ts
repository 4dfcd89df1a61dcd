/**
 * Found by review (forty-first session, a newcomer's first `REDIS_URL=... npm run demo`): every
 * run left its fencing counters in the user's Redis for good (eight keys on a first run, five
 * more on each run after, since the demo's accounts and reports are named per run): the sample
 * app kept the module's `fenceRetention` default, "kept forever". It sets a retention now, so that
 * an idle counter expires on its own (the next one on that key still starts above its tokens).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { redisUrl, useRedis } from '../support/redis.js';

const main = new URL('../../sample-app/dist/main.js', import.meta.url);

describe('the sample app on Redis, closed', () => {
  const redis = useRedis();

  it('leaves no key in Redis without an expiry, its fencing counters included', { timeout: 60_000 }, async () => {
    expect(existsSync(fileURLToPath(main)), 'the sample app is built (npm run build && npm run build:sample)').toBe(true);
    const app = spawnFixture(main, { REDIS_URL: redisUrl(), PORT: '0', OPEN_DATABASE: 'lazy', INSTANCE: 'retention', LOCKS_TOKEN: '' });
    try {
      // However long its start takes on a loaded machine (the test's timeout bounds it).
      const [, url] = await app.line(/^sample-app listening on (\S+)$/);
      // A report takes a fenced lock of its own (no database needed); the cron job and the
      // feed's election take theirs as the instance runs.
      const report = await fetch(`${url}/reports/retention`, { method: 'POST' });
      expect(report.status).toBe(201);
      await expect.poll(() => redis.exists('sample-lock:{stock-count}:fence', 'sample-lock:{price-feed}:fence'), { timeout: 10_000 }).toBe(2);
    } finally {
      await app.kill('SIGTERM');
    }
    const keys = await redis.keys('*');
    expect(keys).toContain('sample-lock:{report:retention}:fence');
    const forever = [];
    for (const key of keys) if ((await redis.pttl(key)) < 0) forever.push(key);
    expect(forever).toEqual([]);
  });
});
