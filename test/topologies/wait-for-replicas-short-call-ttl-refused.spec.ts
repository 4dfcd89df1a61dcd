import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useReplicatedServer } from '../support/replicated-server.js';

/**
 * Found by review. docs/configuration.md: `waitForReplicas: { replicas, timeout? }`, "`timeout` default 1000 ms, at
 * most half the `ttl`" — checked against the module's ttl only. A call may give its own, shorter
 * `ttl` (documented per-call option), and nothing checks it against the WAIT timeout. When the
 * replica then takes longer than the call's lease to confirm (a replica lagging, well within the
 * configured WAIT timeout), the acquire reply comes back after the lease it started, the engine
 * drops it as stale, and `tryAcquire()` resolves `null`, which docs/locks.md defines as "busy",
 * for a key nobody holds (Redis holds nothing for it before or after). A caller that reads null
 * as "someone else is doing it" skips the work for good. Either the call should be refused
 * (InvalidLockOptionsError naming ttl and waitForReplicas, as `fenceRetention` refuses a longer
 * call ttl) or the failure reported as what it is (LockNotReplicatedError / a Redis error).
 */
describe('waitForReplicas with a call ttl below twice its timeout', () => {
  const servers = useReplicatedServer();

  it('tryAcquire() of a free key does not answer "busy" (null) while the replica confirms late', { timeout: 60_000 }, async () => {
    // Module ttl 10 s, WAIT timeout 4 s: valid (at most half the ttl).
    const app = await createLockApp({ redis: servers.master.url, ttl: 10_000, waitForReplicas: { replicas: 1, timeout: 4_000 } });
    const admin = new Redis(servers.master.url);
    try {
      await (await app.locks.acquire('warm')).release(); // connections up, scripts cached
      // The replica lags about 0.55 s: well within the WAIT timeout, past the call's 100 ms lease
      // (and short of the 1 s a single attempt's answer is waited for).
      servers.replica.pause();
      const thaw = setTimeout(() => servers.replica.resume(), 550);
      let outcome: string;
      try {
        outcome = await app.locks.tryAcquire('short-lease', { ttl: 100 }).then(
          (lock) => (lock === null ? 'null (busy)' : 'a lock'),
          (error: unknown) => `rejected: ${(error as Error).name}: ${(error as Error).message}`,
        );
      } finally {
        await new Promise((resolve) => setTimeout(resolve, 700));
        clearTimeout(thaw);
      }
      // Nobody held the key, before or after.
      expect(await admin.exists('lock:{short-lease}')).toBe(0);
      // It resolved null, "busy", for a free key. Refused now, naming both options.
      expect(outcome).toMatch(/^rejected: InvalidLockOptionsError: .*"ttl".*at least twice waitForReplicas\.timeout \(4000 ms\)/);
      // A call ttl of twice the timeout is taken.
      const lock = await app.locks.acquire('long-enough', { ttl: 8_000 });
      expect(lock.held).toBe(true);
      await lock.release();
    } finally {
      servers.replica.resume();
      admin.disconnect();
      await app.close();
    }
  });
});
