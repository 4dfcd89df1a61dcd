import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { watchCommands } from '../support/monitor.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by the second review of the day's fixes (twenty-ninth session): since 57aa512 a master that
 * answers again after a lapse is sent its missed releases at once (QuorumStore.answersAgain), where
 * before they waited for app.close(). A missed release is keyed by node, lock and owner token, and
 * the attempts of one acquisition share their token: a waiter's failed attempt gives back what it
 * took (release under token T, missed on the masters that did not answer), and its next attempt
 * under the same T may be granted there. The resend, queued behind that later attempt on the
 * master's connection, deletes the holder's copy: the holder keeps the lock on fewer masters than
 * a majority, and another instance takes the same key while it still holds it.
 *
 * Here masters 0 and 2 are cut off for 1.5 s while a waiter polls (both lapse and go silent; with
 * no majority left, every master is asked all the same). They answer again while an attempt is out:
 * the attempt is granted on all three, then the resent releases delete its copies on 0 and 2.
 */
describe('quorum: a missed release resent when a master answers again', () => {
  const servers = useQuorumServers();

  it('does not delete the copy a later attempt of the same acquisition took', { timeout: 60_000 }, async () => {
    const app = await createLockApp({ redis: servers.map((s) => s.url), ttl: 5_000 });
    const other = await createLockApp({ redis: servers.map((s) => s.url), ttl: 5_000 });
    const masters = servers.map((s) => new Redis(s.url));
    const seen = await watchCommands('lock:{k}', servers[1]!.url);
    try {
      servers[0]!.pause();
      servers[2]!.pause();
      const waiting = app.locks.acquire('k', { waitTimeout: 20_000 });
      waiting.catch(() => undefined);
      // Attempts fail (only master 1 answers); their give-backs time out on 0 and 2 (missed).
      await sleep(2_000);
      // Resume masters 0 and 2 right after the waiter's next attempt reached master 1.
      const attempts = () => seen.seen.filter((command) => command.args.length >= 7).length;
      const before = attempts();
      while (attempts() === before) await sleep(2);
      servers[0]!.resume();
      servers[2]!.resume();
      const lock = await waiting;
      await sleep(500);
      expect(lock.signal.aborted).toBe(false);
      const copies = await Promise.all(masters.map((master) => master.get('lock:{k}')));
      // Fails: [null, token, null]: the resent give-backs of the first attempt deleted the copies
      // the latest attempt of the same token was granted on masters 0 and 2.
      expect(copies.filter((copy) => copy !== null).length).toBeGreaterThanOrEqual(2);
      // What it costs: another instance takes the key while the holder still holds it.
      const rival = await other.locks.tryAcquire('k');
      expect(rival).toBeNull();
      await lock.release();
    } finally {
      servers[0]!.resume();
      servers[2]!.resume();
      await seen.stop();
      for (const master of masters) master.disconnect();
      await other.close();
      await app.close();
    }
  });
});
