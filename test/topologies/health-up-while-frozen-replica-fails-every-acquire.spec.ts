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
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockNotReplicatedError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useReplicatedServer } from '../support/replicated-server.js';

describe('the terminus indicator with waitForReplicas while the replica is frozen', () => {
  const servers = useReplicatedServer();

  it('reports down while the frozen replica confirms nothing', { timeout: 60_000 }, async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis: servers.master.url, waitForReplicas: { replicas: 1, timeout: 200 } })],
      providers: [RedisLockHealthIndicator],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const probe = new Redis(servers.master.url);
    try {
      const locks = moduleRef.get(LockService);
      const indicator = moduleRef.get(RedisLockHealthIndicator);
      // Control: with the replica up, locks work and the check is up.
      await (await locks.acquire('frozen:control')).release();
      expect((await indicator.isHealthy('locks')).locks).toMatchObject({ status: 'up', replicas: { online: 1, needed: 1 } });

      servers.replica.pause();
      // The master has heard nothing from it for a few seconds (lag counts seconds since its last ack).
      await expect.poll(async () => Number(/slave0:.*lag=(\d+)/.exec(await probe.info('replication'))?.[1] ?? 0), { timeout: 20_000, interval: 250 }).toBeGreaterThanOrEqual(3);
      // Still listed as online: the master waits repl-timeout before dropping it.
      expect(await probe.info('replication')).toMatch(/slave0:.*state=online/);

      // Every acquisition fails: the replica cannot confirm.
      for (const key of ['frozen:a', 'frozen:b', 'frozen:c']) {
        const error = await locks.acquire(key, { waitTimeout: 0 }).then(
          () => undefined,
          (failed: unknown) => failed,
        );
        expect(error).toBeInstanceOf(LockNotAcquiredError);
        expect((error as Error).cause).toBeInstanceOf(LockNotReplicatedError);
      }
      const health = await indicator.isHealthy('locks');
      expect(health.locks).toMatchObject({ status: 'down' });
    } finally {
      probe.disconnect();
      servers.replica.resume();
      await moduleRef.close();
    }
  });
});
