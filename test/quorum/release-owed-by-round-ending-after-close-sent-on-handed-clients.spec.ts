import { describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { isScriptCall, watchCommands } from '../support/monitor.js';
import { clientsOf, useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Suspected and shown in the fortieth session. app.close() takes the releases owed to the masters
 * once its give-back has run or its shutdownTimeout is up (QuorumStore.owedAtShutdown). A release
 * round still running then (two masters frozen: no majority releases, and the round waits its
 * own time, past a short shutdownTimeout) ends after the close, and recorded the frozen masters'
 * releases as owed. With the application's own clients handed in (open after the close), each
 * master that answered again was sent its owed release then (QuorumStore.answersAgain), by an
 * application closed already.
 */
describe('quorum: a release owed by a round that ends after app.close(), with clients handed in', () => {
  const servers = useQuorumServers();

  it('is not sent when the master answers again', { timeout: 30_000 }, async () => {
    const clients = clientsOf(servers);
    const app = await createLockApp({ redis: clients as never, ttl: 30_000, shutdownTimeout: '100ms' });
    const seen = await watchCommands('lock:{late-round}', servers[1]!.url);
    try {
      await app.locks.acquire('late-round');
      // The round ends at an agreeing majority: master 1's grant may land a moment later.
      let checks = 0;
      await expect.poll(() => (checks++, clients[1]!.exists('lock:{late-round}'))).toBe(1);
      // Every command master 1 ran before the last EXISTS has reached the monitor (MONITOR keeps
      // the server's order; a loaded machine delivers its stream late).
      await expect.poll(() => seen.seen.filter(({ args }) => args[0]?.toLowerCase() === 'exists').length).toBe(checks);
      const before = seen.seen.filter(isScriptCall).length;
      servers[1]!.pause();
      servers[2]!.pause();
      // The give-back's round waits for masters 1 and 2 past shutdownTimeout: the close ends first.
      await app.close();
      // The round's own time is up meanwhile: masters 1 and 2 are owed the release from then.
      await sleep(1_500);
      servers[1]!.resume();
      servers[2]!.resume();
      // Master 1 answers the release written before the close; whatever is sent when it answers
      // again runs before the pings behind it.
      await clients[1]!.ping();
      await clients[1]!.ping();
      await seen.stop();
      // Before: 2, the give-back written before the close and that release sent again after it.
      expect(seen.seen.filter(isScriptCall).slice(before).map(({ args }) => args[0]!.toLowerCase())).toEqual([expect.stringMatching(/^eval/)]);
    } finally {
      servers[1]!.resume();
      servers[2]!.resume();
      await seen.stop();
      await app.close();
      for (const client of clients) client.disconnect();
    }
  });
});
