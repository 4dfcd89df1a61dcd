import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { clientsOf, useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by CI (the behaviour suite's quorum run): `inspect()` reported as the holder's fencing
 * token the highest counter of any master. A master the holder's grant had not reached yet
 * granted a rival's poll instead, which started the key's counter there at the rival's (later)
 * clock and gave the grant back; that master's counter was then above the token a majority
 * handed out, and `inspect()` showed that number as the holder's. The token a majority holds is
 * the highest value a majority of the masters have reached.
 */
describe('quorum: inspect() where one master counted a rival attempt the others never saw', () => {
  const servers = useQuorumServers();

  const connect = () => clientsOf(servers);

  it("reports the holder's token, not the minority's higher counter", { timeout: 30_000 }, async () => {
    const holderClients = connect();
    const rivalClients = connect();
    // Handed in: closing the apps leaves them open (their owner closes them).
    onTestFinished(() => [...holderClients, ...rivalClients].forEach((client) => client.disconnect()));
    const holder = await createLockApp({ redis: holderClients as never, ttl: 10_000 });
    const rival = await createLockApp({ redis: rivalClients as never, ttl: 10_000 });
    try {
      // Master 2 never hears of the holder's acquisition: masters 0 and 1 grant it.
      holderClients[2]!.disconnect();
      const held = await holder.locks.acquire('report');
      // The rival's clock is later, so master 2 starts the counter it creates above the holder's token.
      await sleep(5);
      expect(await rival.locks.tryAcquire('report')).toBeNull();
      const counter = new Redis(servers[2]!.url);
      expect(Number(await counter.get('lock:{report}:fence'))).toBeGreaterThan(held.fencingToken);
      counter.disconnect();

      const seen = await rival.locks.inspect('report');
      expect(seen).toMatchObject({ held: true });
      // Before: the counter of master 2.
      expect(seen.fencingToken).toBe(held.fencingToken);
      await held.release();
    } finally {
      await rival.close();
      await holder.close();
    }
  });
});
