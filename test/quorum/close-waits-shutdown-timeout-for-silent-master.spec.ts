import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { nodeRedisClient, type TestClient } from '../support/node-redis.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review (thirty-ninth session). A release that a silent master (frozen, or down with its
 * commands waiting in the client: see QuorumSilence) was not sent is owed to it, and app.close()
 * sends it again (QuorumStore.owedAtShutdown). Shutdown then waited for that master's answer,
 * which a frozen master never gives: with one master of three frozen, every app.close() that had
 * released a lock during the freeze took its whole `shutdownTimeout`, though the locks were given
 * back on the majority at once (docs/deployment.md: "a minority of failed or frozen nodes changes
 * nothing"). The resend to a silent master still goes out (written to its connection, it runs
 * once the master resumes), but shutdown no longer waits for its answer; it waits one turn of the
 * event loop, in which node-redis writes what it was given: a client closed right after the
 * application (node-redis' `destroy()`) would otherwise never have sent it.
 */
describe('quorum: app.close() with a minority master frozen and silent', () => {
  const servers = useQuorumServers();

  async function closeWithSilentMaster(redis: unknown, closeClients = (): void => undefined): Promise<void> {
    const frozen = new Redis(servers[2]!.url);
    // Far longer than the test: a close that waits for the frozen master cannot end in it.
    const app = await createLockApp({ redis: redis as never, ttl: 30_000, shutdownTimeout: '120s' });
    try {
      const lock = await app.locks.acquire('owed');
      // The round ends at an agreeing majority: master 2's grant may land a moment later.
      await expect.poll(() => frozen.exists('lock:{owed}')).toBe(1);
      servers[2]!.pause();
      // A read leaves master 2 unanswered (a round's end); a second later it is silent.
      await app.locks.isLocked('owed');
      await sleep(1_200);
      // Released on the majority; master 2, silent, is sent nothing and owed the release.
      await lock.release();
      const closing = app.close().then(closeClients);
      const outcome = await Promise.race([closing.then(() => 'closed'), sleep(15_000).then(() => 'waiting for the frozen master')]);
      // Before: waiting, for the whole shutdownTimeout.
      expect(outcome).toBe('closed');
      servers[2]!.resume();
      // Its copy (a 30 s lease) is deleted by the release sent at shutdown.
      await expect.poll(() => frozen.exists('lock:{owed}'), { timeout: 5_000 }).toBe(0);
    } finally {
      servers[2]!.resume();
      await app.close();
      frozen.disconnect();
    }
  }

  it('does not wait for the releases owed to that master, which still reach it once it resumes', { timeout: 60_000 }, async () => {
    await closeWithSilentMaster(servers.map((server) => server.url));
  });

  it('the same with node-redis clients handed in and destroyed right after the close', { timeout: 60_000 }, async () => {
    const clients: TestClient[] = await Promise.all(servers.map((server) => nodeRedisClient(server.url)));
    const destroy = (): void => clients.forEach((client) => (client as unknown as { destroy(): void }).destroy());
    try {
      await closeWithSilentMaster(clients, destroy);
    } finally {
      for (const client of clients) if (client.isOpen) (client as unknown as { destroy(): void }).destroy();
    }
  });
});
