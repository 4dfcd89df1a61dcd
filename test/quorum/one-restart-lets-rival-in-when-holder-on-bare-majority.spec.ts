/**
 * Found by review (thirty-fifth session), a docs fix: docs/guarantees.md ("When Redis loses its
 * data") said quorum mode keeps the promises across a restart without persistence, "one node
 * restarting empty lets no rival in". docs/deployment.md ("A quorum node that restarts empty")
 * says what that cannot cover, and this spec pins one of those cases, a single restart with no
 * other fault: a holder whose grant found a rival's attempt on the third master (contention) holds
 * on a bare majority, and no renewal puts its copy there (the key was not missing, it was the
 * rival's). Once that attempt is given back and one of the holder's two masters restarts empty, a
 * rival takes the other two: two holders, until the holder's next renewal is refused.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

describe('quorum: one master restarting empty while the holder is on a bare majority', () => {
  const servers = useQuorumServers();

  it('lets a rival in beside the holder until its next renewal (docs/deployment.md)', { timeout: 40_000 }, async () => {
    const key = 'q:bare-majority';
    const urls = servers.map((server) => server.url);
    const master2 = new Redis(urls[2]!);
    // Its first renewal comes 5 to 10 s after it took the lock.
    const holder = await createLockApp({ redis: urls, ttl: 40_000, renewInterval: 10_000 });
    let rival: Awaited<ReturnType<typeof createLockApp>> | undefined;
    try {
      // A rival's attempt took master 2 first (its give-back is on its way).
      await master2.set(`lock:{${key}}`, 'a rival attempt', 'PX', 10_000);
      const lock = await holder.locks.acquire(key);
      // Master 2 has run the holder's attempt (busy): the round ended on the majority's grants,
      // and it is raised to the holder's token once it answered.
      await expect.poll(() => master2.get(`lock:{${key}}:fence`)).toBe(String(lock.fencingToken));
      expect(await master2.get(`lock:{${key}}`)).toBe('a rival attempt');
      // The attempt is given back: the holder's copies are on masters 0 and 1 only.
      await master2.del(`lock:{${key}}`);
      // Master 1 restarts without persistence.
      await servers[1]!.stop({ kill: true });
      await servers[1]!.start();
      rival = await createLockApp({ redis: urls, ttl: 40_000 });
      const second = await rival.locks.tryAcquire(key);
      // Two holders: the rival took masters 1 and 2, the holder still holds in its own eyes.
      expect(second).not.toBeNull();
      expect(lock.signal.aborted).toBe(false);
      // What protects the resource then: the rival's token is the higher one.
      expect(second!.fencingToken).toBeGreaterThan(lock.fencingToken);
      // Its next renewal (here asked for at once) finds the lock not its own on two masters:
      // refused, the loss told.
      await lock.extend().catch(() => undefined);
      expect(lock.signal.reason).toMatchObject({ reason: 'refused' });
      await second?.release();
    } finally {
      master2.disconnect();
      await holder.close();
      await rival?.close();
    }
  });
});
