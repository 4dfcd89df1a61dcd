import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';
import { RECORDED_CLIENTS, recordedGlide, type Handed } from '../support/recorded-clients.js';

/**
 * Found by review of bb21f271. In quorum mode a release that the client handed in of one master
 * (a minority) fails, closed by its owner, is owed to that master while the application runs
 * (the owner may open it again: ioredis' connect()), and the release of a lock still held at the
 * close fails there alike. At app.close() both were sent on that client again (owedAtShutdown),
 * known closed, to fail at once: one more refused command per release owed, up to the bound of
 * 10,000 to 20,000 by master. From the shutdown on such a release is given up, not owed, as
 * bb21f271 gives up a majority's, and one owed before is not sent on a client still closed. The
 * locks are free (a majority released them); the closed master's copies end with their leases.
 * Shown by the commands sent on that client during the close, not by time.
 */
describe('quorum: releases owed to one master whose client its owner closed', () => {
  const servers = useQuorumServers();

  /**
   * The clients that send what they are asked on a client their owner closed, each failing at once
   * (the ioredis driver refuses an ended client's commands unsent), and how their owner closes them.
   */
  const clients: [string, (url: string) => Promise<Handed>, (client: unknown) => Promise<unknown>][] = [
    ['node-redis', RECORDED_CLIENTS.find(([name]) => name === 'node-redis')![1], (client) => (client as { close(): Promise<void> }).close()],
    ['GLIDE', recordedGlide, async (client) => (client as { close(): void }).close()],
  ];

  for (const [label, open, closeOwned] of clients) {
    it(`are not sent on that client at app.close() (${label})`, { timeout: 30_000 }, async () => {
      const handed = await Promise.all(servers.map((server) => open(server.url)));
      const app = await createLockApp({ redis: handed.map(({ client }) => client) as never, shutdownTimeout: 2_000 });
      onTestFinished(() => app.close());
      const master2 = new Redis(servers[2]!.url);
      onTestFinished(() => void master2.disconnect());
      const released = await app.locks.acquire(`q-owed-closed:released:${label}`, { ttl: 60_000 });
      const held = await app.locks.acquire(`q-owed-closed:held:${label}`, { ttl: 60_000 });
      // Their grants on master 2 (a round ends on a majority: the third's may still be on its way).
      await expect.poll(() => master2.exists(`lock:{q-owed-closed:released:${label}}`, `lock:{q-owed-closed:held:${label}}`)).toBe(2);
      await closeOwned(handed[2]!.client);
      // Released by masters 0 and 1; owed to master 2 while the application runs.
      await released.release();
      const sent: string[] = [];
      handed[2]!.record(sent);
      await app.close();
      // Nothing: not even the held lock's release round, which the close sent on every master's
      // client before (see release-round-at-close-not-sent-on-clients-closed-by-owner.spec.ts).
      // Failed: 3, the two releases owed to master 2 sent again on its closed client.
      expect(sent.filter((command) => /^eval(sha)?$/.test(command))).toHaveLength(0);
      expect(held.held).toBe(false);
    });
  }
});
