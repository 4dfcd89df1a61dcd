/**
 * Found by review (forty-third session): a leader hook that throws a value with no prototype
 * (`Object.create(null)`, as some RPC and validation libraries build their error payloads) broke
 * the election for good. The runner described what was thrown with
 * `` `${error?.message ?? String(error)}` ``, and `String()` of such a value throws a TypeError
 * inside the catch: `onLeadershipAcquired` threw, nothing was logged, the instance never stepped
 * down (the lease stayed held and renewed, no other instance could lead), it never tried again,
 * and the hooks' chain stayed rejected (an unhandled rejection; every later hook skipped).
 * An onLeadershipLost throwing such a value was not logged at all.
 *
 * Promise (docs/jobs-and-leaders.md): a hook that throws is logged and the instance steps down,
 * gives the lease back and tries again, whatever it threw.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from '../jobs/support.js';

function bare(message: string): object {
  return Object.assign(Object.create(null) as object, { code: 'E_FEED', detail: message });
}

describe('a leader hook that throws a value without a prototype', () => {
  const redis = useRedis();

  it('onLeadershipAcquired: is logged, the instance steps down and tries again', async () => {
    let tries = 0;
    @Injectable()
    @LeaderElection('bare-throw-acquired', { ttl: '3s' })
    class Feed implements OnLeadershipAcquired {
      onLeadershipAcquired(): void {
        tries += 1;
        throw bare('feed refused');
      }
    }
    const app = await startJobApp([Feed]);
    // Failed: stuck at 1 (the election stopped, holding and renewing the lease), and an unhandled TypeError.
    await expect.poll(() => tries, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    expect(app.logs.has('error', 'onLeadershipAcquired of Feed threw')).toBe(true);
    await closeNow(app);
  }, 30_000);

  it('onLeadershipLost: is logged, and the next term is announced again after a step-down', async () => {
    let acquired = 0;
    let lost = 0;
    @Injectable()
    @LeaderElection('bare-throw-lost', { ttl: '3s' })
    class Feed implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(): void {
        acquired += 1;
        throw new Error('step down');
      }
      onLeadershipLost(): void {
        lost += 1;
        throw bare('close refused');
      }
    }
    const app = await startJobApp([Feed]);
    await expect.poll(() => acquired, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    expect(lost).toBeGreaterThanOrEqual(1);
    // Failed: nothing was logged (describing what it threw threw).
    expect(app.logs.has('error', 'onLeadershipLost of Feed threw')).toBe(true);
    await closeNow(app);
  }, 30_000);

  it('onLeadershipLost at app.close(): is logged, the close ends and the lease is given back', async () => {
    let leading = false;
    @Injectable()
    @LeaderElection('bare-throw-close', { ttl: '30s' })
    class Feed implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(): void {
        leading = true;
      }
      onLeadershipLost(): void {
        throw bare('close refused');
      }
    }
    const app = await startJobApp([Feed]);
    await expect.poll(() => leading).toBe(true);
    // The fencing counter outlives the terms, as it should.
    const leases = async (): Promise<string[]> => (await redis.keys('*')).filter((key) => !key.endsWith(':fence'));
    expect(await leases()).not.toEqual([]);
    await expect(closeNow(app)).resolves.toBeUndefined();
    // Failed: nothing was logged (describing what it threw threw).
    expect(app.logs.has('error', 'onLeadershipLost of Feed threw')).toBe(true);
    expect(await leases()).toEqual([]);
  }, 30_000);
});
