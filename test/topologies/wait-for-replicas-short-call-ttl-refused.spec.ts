import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

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
  let master: RedisServer;
  let replica: RedisServer;
  let replicaPid = 0;
  beforeAll(async () => {
    master = await startRedisServer();
    replica = await startRedisServer(['--replicaof', '127.0.0.1', String(master.port), '--dir', mkdtempSync(join(tmpdir(), 'replica-'))]);
    const probe = new Redis(master.url);
    const until = Date.now() + 20_000;
    while (!/slave0:.*state=online/.test(await probe.info('replication'))) {
      if (Date.now() > until) throw new Error('the replica did not sync');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    probe.disconnect();
    const onReplica = new Redis(replica.url);
    replicaPid = Number(/process_id:(\d+)/.exec(await onReplica.info('server'))![1]);
    onReplica.disconnect();
  }, 60_000);
  afterAll(async () => {
    if (replicaPid) process.kill(replicaPid, 'SIGCONT');
    await replica?.stop({ kill: true });
    await master?.stop();
  });

  it('tryAcquire() of a free key does not answer "busy" (null) while the replica confirms late', { timeout: 60_000 }, async () => {
    // Module ttl 10 s, WAIT timeout 4 s: valid (at most half the ttl).
    const app = await createLockApp({ redis: master.url, ttl: 10_000, waitForReplicas: { replicas: 1, timeout: 4_000 } });
    const admin = new Redis(master.url);
    try {
      await (await app.locks.acquire('warm')).release(); // connections up, scripts cached
      // The replica lags about 0.55 s: well within the WAIT timeout, past the call's 100 ms lease
      // (and short of the 1 s a single attempt's answer is waited for).
      process.kill(replicaPid, 'SIGSTOP');
      const thaw = setTimeout(() => process.kill(replicaPid, 'SIGCONT'), 550);
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
      process.kill(replicaPid, 'SIGCONT');
      admin.disconnect();
      await app.close();
    }
  });
});
