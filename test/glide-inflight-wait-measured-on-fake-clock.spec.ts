/**
 * Found by review (thirty-first session, fixes). 00c4977 made the GLIDE driver queue its own commands over the
 * client's inflightRequestsLimit, failing one that waited 2 s (INFLIGHT_RETRY_MS) unsent. It
 * measures that wait with the global `performance.now()` (glide-driver.ts sendWithin/hand/
 * expireLater), which a test's fake timers replace (`vi.useFakeTimers()` fakes `performance` by
 * default in vitest 4; jest's modern timers too), while the library's clock (clock.ts) reads
 * `node:perf_hooks`, which they do not, and the expiry timer runs on real timers (real-timers.ts,
 * written so that the GLIDE backoff works under fake timers). So a test that moves its fake time
 * past 2 s while the module's commands wait for a place (a ttl, a renewInterval: what fake timers
 * are for) has them failed at once as "in flight for 2000 ms: the command was not sent", although
 * they waited a few real milliseconds and Redis answers them a moment later. Before 00c4977 the
 * wait was the sum of the driver's own real backoffs.
 */
import { GlideClient } from '@valkey/valkey-glide';
import { setTimeout as realSleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { blockRedis } from './support/block-redis.js';
import { createLockApp } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';

const LIMIT = 5;

describe('lock commands waiting for a place on a GLIDE client, under a test\'s fake timers', () => {
  const own = useOwnRedis();
  afterEach(() => {
    vi.useRealTimers();
  });

  it('are not failed as waited 2 s when the test moves its fake clock', { timeout: 30_000 }, async () => {
    const url = new URL(own.url());
    const client = await GlideClient.createClient({ addresses: [{ host: url.hostname, port: Number(url.port) }], requestTimeout: 5_000, inflightRequestsLimit: LIMIT });
    const app = await createLockApp({ redis: client, ttl: 30_000 });
    try {
      await app.locks.isLocked('warm-up');
      // Redis answers nothing for a second: the first LIMIT commands hold the client's places.
      const { ended } = await blockRedis(own.url(), 1_000);
      vi.useFakeTimers();
      const calls = Array.from({ length: LIMIT + 3 }, (_, i) => app.locks.isLocked(`k${i}`).then(String, (error: Error) => error.message));
      // The test moves its fake clock (past a ttl, say); a few real milliseconds pass.
      vi.advanceTimersByTime(5_000);
      await realSleep(700);
      vi.useRealTimers();
      await ended;
      const outcomes = await Promise.all(calls);
      expect(outcomes).toEqual(Array.from({ length: LIMIT + 3 }, () => 'false'));
    } finally {
      vi.useRealTimers();
      await app.close();
      client.close();
    }
  });
});
