import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockNotReplicatedError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useReplicatedServer } from '../support/replicated-server.js';

// The Terminus indicator under `waitForReplicas`, on one master and its replica (the tests run in
// order: the last one kills the replica).
describe('the terminus indicator with waitForReplicas', () => {
  const servers = useReplicatedServer();

  // A review's suspicion, confirmed: `isHealthy({ timeout })` gave each of its steps the whole
  // `timeout`: the PING, then (with `waitForReplicas`) the master's `INFO replication`, and on a
  // Cluster the discovery of the masters before their PINGs. A master slow to answer each (a
  // busy server, a loaded VM) made the check take up to twice its timeout and still say `up`,
  // where an orchestrator's probe, set to the same timeout, had given up. Every step now gets what
  // is left of one budget.
  it('spends one timeout on PING and INFO together', { timeout: 30_000 }, async () => {
    const client = new Redis(servers.master.url);
    const { moduleRef, indicator } = await checkedApp(client);
    const freezes: Promise<void>[] = [];
    /** The master answers nothing for 700 ms: each step on its own is within the 1 s timeout. */
    const freezeMaster = () => {
      servers.master.pause();
      freezes.push(new Promise((resolve) => setTimeout(resolve, 700)).then(() => servers.master.resume()));
    };
    try {
      expect((await indicator.isHealthy('locks', { timeout: 1_000 })).locks).toMatchObject({ status: 'up', replicas: { online: 1, needed: 1 } });
      const info = client.info.bind(client) as (section: string) => Promise<string>;
      let infoAsked = 0;
      (client as unknown as { info(section: string): Promise<string> }).info = (section: string) => {
        infoAsked++;
        freezeMaster();
        return info(section);
      };
      freezeMaster();
      const health = await indicator.isHealthy('locks', { timeout: 1_000 });
      // The PING was answered in time; the INFO after it had only what was left of the second.
      expect(infoAsked).toBe(1);
      expect(health.locks).toMatchObject({ status: 'down', nodes: [{ status: 'up' }], replicas: { error: expect.stringMatching(/INFO replication/) } });
    } finally {
      servers.master.resume();
      await Promise.all(freezes);
      await moduleRef.close();
      client.disconnect();
    }
  });

  // docs/observability.md: "With `waitForReplicas` it also reads the master's `INFO replication`
  // and reports `replicas: { online, needed }`: fewer replicas online than
  // `waitForReplicas.replicas` is `down`, since every acquisition then fails." CHANGELOG
  // (853f762): the check "said up while every acquisition failed".
  //
  // What happens: the check counts the `slaveN:` lines with `state=online`. A replica that is
  // frozen (SIGSTOP: a paused VM, a stuck disk, a network cut that has not reset the TCP
  // connection) stays `state=online` on the master until repl-timeout (60 s by default) while it
  // acknowledges nothing: its `lag` grows second by second. WAIT counts acknowledgements, so
  // every acquisition fails with LockNotReplicatedError, and the check still reports
  // `up` with `replicas: { online: 1, needed: 1 }`: the very state the fix was to catch, for a
  // minute per freeze.
  it('reports down while the frozen replica confirms nothing', { timeout: 60_000 }, async () => {
    const { moduleRef, locks, indicator } = await checkedApp(servers.master.url);
    const probe = new Redis(servers.master.url);
    try {
      // Control: with the replica up, locks work and the check is up.
      await (await locks.acquire('frozen:control')).release();
      expect((await indicator.isHealthy('locks')).locks).toMatchObject({ status: 'up', replicas: { online: 1, needed: 1 } });

      servers.replica.pause();
      // The master has heard nothing from it for a few seconds (lag counts seconds since its last ack).
      await expect.poll(async () => Number(/slave0:.*lag=(\d+)/.exec(await probe.info('replication'))?.[1] ?? 0), { timeout: 20_000, interval: 250 }).toBeGreaterThanOrEqual(3);
      // Still listed as online: the master waits repl-timeout before dropping it.
      expect(await probe.info('replication')).toMatch(/slave0:.*state=online/);

      // Every acquisition fails: the replica cannot confirm.
      await expectEveryAcquisitionRefused(locks, 'frozen');
      const health = await indicator.isHealthy('locks');
      expect(health.locks).toMatchObject({ status: 'down' });
    } finally {
      probe.disconnect();
      servers.replica.resume();
      await moduleRef.close();
    }
  });

  // `waitForReplicas: { replicas: 1 }` on a master whose only replica is gone: every acquisition
  // fails with LockNotAcquiredError (cause LockNotReplicatedError), so no lock can be taken at all.
  // The Terminus indicator is what an orchestrator reads to take such an instance out of service;
  // docs/observability.md says a Cluster master that is down makes the check `down` "since the keys
  // of its slots cannot be locked". Here no key can be locked, and the check said `up`.
  it('reports down (or at least not plain up) while every acquisition fails for want of a replica', { timeout: 60_000 }, async () => {
    const { moduleRef, locks, indicator } = await checkedApp(servers.master.url);
    try {
      // Control: with the replica up, locks work and the check is up.
      await (await locks.acquire('health:control')).release();
      // (The replica the test before froze acknowledges again within a second or two.)
      await expect.poll(async () => (await indicator.isHealthy('locks')).locks, { timeout: 10_000 }).toMatchObject({ status: 'up', replicas: { online: 1, needed: 1 } });

      await servers.replica.stop({ kill: true });
      const probe = new Redis(servers.master.url);
      await expect.poll(async () => /connected_slaves:0/.test(await probe.info('replication')), { timeout: 20_000 }).toBe(true);
      probe.disconnect();

      // Every acquisition now fails: the replica cannot confirm.
      await expectEveryAcquisitionRefused(locks, 'health');
      const health = await indicator.isHealthy('locks');
      // It said up (it only PINGed the master).
      expect(health.locks).toMatchObject({ status: 'down', replicas: { online: 0, needed: 1 } });
    } finally {
      await moduleRef.close();
    }
  });
});

/** Acquisitions of three keys fail at once: no replica confirms them. */
async function expectEveryAcquisitionRefused(locks: LockService, prefix: string): Promise<void> {
  for (const key of [`${prefix}:a`, `${prefix}:b`, `${prefix}:c`]) {
    const error = await locks.acquire(key, { waitTimeout: 0 }).then(
      () => undefined,
      (failed: unknown) => failed,
    );
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).cause).toBeInstanceOf(LockNotReplicatedError);
  }
}

/** A Nest context with the indicator and `waitForReplicas: { replicas: 1 }` on `redis`. */
async function checkedApp(redis: string | Redis) {
  const moduleRef = await Test.createTestingModule({
    imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis, waitForReplicas: { replicas: 1, timeout: 200 } })],
    providers: [RedisLockHealthIndicator],
  })
    .setLogger(new CapturedLogs())
    .compile();
  await moduleRef.init();
  return { moduleRef, locks: moduleRef.get(LockService), indicator: moduleRef.get(RedisLockHealthIndicator) };
}
