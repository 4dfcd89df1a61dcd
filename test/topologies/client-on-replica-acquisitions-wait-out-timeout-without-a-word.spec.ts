import { GlideClient } from '@valkey/valkey-glide';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockService, RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { useReplicatedServer } from '../support/replicated-server.js';

/**
 * Found by review. A `redis` option that reaches a replica by mistake (a URL copied from the
 * wrong line, a replica behind a load balancer): the replica refuses every write with READONLY,
 * which the engine takes for a failover under way and retries, so every acquisition waited out
 * its whole `waitTimeout` and failed as "not acquired", and startup said nothing. Retrying stays
 * (in a failover the connection moves to the new master); the startup check that reads the
 * server's `INFO` now logs such a server as an error, naming the option and its master, as quorum
 * mode does for an entry. A client that reaches the master and reads from the replica (GLIDE's
 * `readFrom`) is no such mistake and is not reported.
 */
describe('a redis option that reaches a replica', () => {
  const pair = useReplicatedServer();

  const open = async (redis: RedisLockModuleOptions['redis']) => {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis, waitTimeout: 300 })] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    return { logs, locks: moduleRef.get(LockService), close: () => moduleRef.close(), errors: () => logs.lines.filter((line) => line.level === 'error').map((line) => line.message) };
  };

  it('is logged at startup as an error naming the option and the master', { timeout: 30_000 }, async () => {
    const app = await open(pair.replica.url);
    try {
      await expect.poll(app.errors, { timeout: 5_000 }).toEqual([expect.stringMatching(new RegExp(`The redis option reaches a replica \\(of 127\\.0\\.0\\.1:${pair.master.port}\\).*READONLY`))]);
      // Acquisitions still fail as in a failover: retried until the waitTimeout, then not acquired.
      await expect(app.locks.acquire('k')).rejects.toThrow(LockNotAcquiredError);
    } finally {
      await app.close();
    }
  });

  it('is not logged for a GLIDE client on the master reading from its replica', { timeout: 30_000 }, async () => {
    const client = await GlideClient.createClient({
      addresses: [{ host: '127.0.0.1', port: pair.master.port }, { host: '127.0.0.1', port: pair.replica.port }],
      requestTimeout: 2_000,
      readFrom: 'preferReplica',
    });
    const app = await open(client as unknown as RedisLockModuleOptions['redis']);
    try {
      await (await app.locks.acquire('k')).release();
      // The check runs in the background: give its INFO the time a replica's answer would take.
      await sleep(300);
      expect(app.errors()).toEqual([]);
    } finally {
      await app.close();
      client.close();
    }
  });
});
