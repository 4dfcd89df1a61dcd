import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp, sleep } from '../support/lock-app.js';
import { watchCommands } from '../support/monitor.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by the real-Redis explorer's silence schedules (thirtieth session, `npm run explore:real --
 * --seed 1046 --silence --target quorum --workload mutex`, 1 run in 5 to 10). A waiter's give-back
 * (the release after a failed attempt) is owed to the masters that did not answer it only when its
 * round ends: once every master answered, or after RELEASE_ROUND_MS (750 ms) when one is frozen.
 * Nobody waits for that round: the waiter's next attempt, under the same token, starts within a
 * poll (250 ms). acquire() forgets the token's owed releases when it starts (fee176c), before the
 * earlier give-back has recorded its own; that entry then stays while the token attempts again and
 * holds, and when its master answers again (QuorumStore.answersAgain) it is resent behind the
 * token's latest attempt on that connection: the acquisition's own grant there is deleted.
 *
 * Here masters 0 and 1 are frozen while a waiter polls a held lock; its holder lets go right after
 * one of the waiter's give-backs (busy on master 2: it released nothing there), and master 0
 * resumes right after the waiter's next attempt went out, which master 0 and 2 then grant (the
 * waiter holds). The give-back before it times out on master 1 afterwards and is owed to it.
 * Master 1 resumes: the attempt is granted there too, then the resent give-back deletes that copy. What it costs: the holder is
 * left on two masters, so one master restarting empty (which quorum mode otherwise survives: a
 * renewal puts the lock back) hands the lock to a rival beside it.
 */
describe('quorum: a give-back owed once its token attempted again', () => {
  const servers = useQuorumServers();

  it('is not resent over the grant of the attempt that took the lock', { timeout: 60_000 }, async () => {
    const holderApp = await createLockApp({ redis: servers.map((s) => s.url), ttl: 3_000 });
    const app = await createLockApp({ redis: servers.map((s) => s.url), ttl: 3_000 });
    const rivalApp = await createLockApp({ redis: servers.map((s) => s.url), ttl: 3_000 });
    const masters = servers.map((s) => new Redis(s.url));
    const seen = await watchCommands('lock:{k}', servers[2]!.url);
    try {
      const holder = await holderApp.locks.acquire('k');
      servers[0]!.pause();
      servers[1]!.pause();
      const waiting = app.locks.acquire('k', { waitTimeout: 20_000 });
      waiting.catch(() => undefined);
      // The waiter's attempts find the lock busy on master 2; each one's give-back waits for
      // masters 0 and 1 until its round's time is up (750 ms).
      await sleep(1_500);
      const count = (args: number) => () => seen.seen.filter((command) => command.args.length === args).length;
      const [attempts, giveBacks] = [count(8), count(5)];
      // Right after a give-back: the holder lets go (on master 2 only), and master 0 resumes
      // right after the waiter's next attempt went out.
      const backs = giveBacks();
      while (giveBacks() === backs) await sleep(1);
      holder.release().catch(() => undefined);
      const before = attempts();
      while (attempts() === before) await sleep(1);
      servers[0]!.resume();
      const lock = await waiting;
      // That give-back's round ends on master 1's timeout, after the attempt that took the lock.
      await sleep(800);
      servers[1]!.resume();
      await sleep(100);
      const copies = await Promise.all(masters.map((master) => master.get('lock:{k}')));
      // The holder's copy on master 2 (master 2 answered every attempt).
      const token = copies[2];
      expect(token).not.toBeNull();
      // Fails: [token, null, token]: master 1 granted the attempt, then the resent give-back of
      // the attempt before it deleted that copy.
      expect.soft(copies).toEqual([token, token, token]);
      // What it costs: master 0 restarting empty, which quorum mode otherwise survives, hands the
      // lock to a rival while its holder still holds it.
      await servers[0]!.stop({ kill: true });
      await servers[0]!.start();
      const rival = await rivalApp.locks.tryAcquire('k');
      expect({ rival: rival !== null, holderStillHolds: lock.held }).toEqual({ rival: false, holderStillHolds: true });
    } finally {
      servers[0]!.resume();
      servers[1]!.resume();
      await seen.stop();
      for (const master of masters) master.disconnect();
      await rivalApp.close();
      await app.close();
      await holderApp.close();
    }
  });
});
