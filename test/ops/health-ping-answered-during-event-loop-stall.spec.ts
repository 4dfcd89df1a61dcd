/**
 * A health check's PING that Redis answered while this process' event loop was stalled (a long
 * GC pause, a busy CPU) past the check's `timeout` counts as answered: the bound's timer is due
 * when the stall ends, and timers run before the loop reads its sockets, so the bound is decided
 * after the loop's next poll for I/O (`settleWithin`), as an acquire attempt's is (see
 * test/reply-answered-during-event-loop-stall.spec.ts). The loop is blocked longer than the
 * timeout right after the PING (the write probe, an EVAL) is written: Redis answers during the block.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { stallAfterCommand } from '../support/mechanism.js';
import { useOwnRedis } from '../support/redis.js';
import { terminusLockModule } from '../support/terminus-app.js';

describe('the terminus indicator when the event loop stalls past the check timeout after the PING is written', () => {
  // A server of its own: its command counts are this file's.
  const own = useOwnRedis();

  it('reports the node up, Redis asked once', async () => {
    const client = new Redis(own.url());
    const moduleRef = await terminusLockModule(client, { waitTimeout: 0 });
    try {
      const health = moduleRef.get(RedisLockHealthIndicator);
      // Connected: only the check's own probe is sent when it runs.
      expect((await health.isHealthy('locks')).locks.status).toBe('up');
      const stall = stallAfterCommand(client, 700);
      const calls = async (): Promise<number> => Number(/cmdstat_eval:calls=(\d+)/.exec(await own.redis().info('commandstats'))?.[1] ?? 0);
      const before = await calls();
      stall.arm('eval');
      const result = await health.isHealthy('locks', { timeout: 500 });
      expect(stall.armed).toBe(false);
      expect(result.locks.status).toBe('up');
      expect(result.locks.nodes).toEqual([expect.objectContaining({ status: 'up' })]);
      expect((await calls()) - before).toBe(1);
    } finally {
      await moduleRef.close();
      client.disconnect();
    }
  });
});
