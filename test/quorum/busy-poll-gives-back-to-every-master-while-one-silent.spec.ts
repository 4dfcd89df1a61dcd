import { describe, expect, it } from 'vitest';
import { sleep } from '../support/lock-app.js';
import { watchCommands } from '../support/monitor.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review (thirty-ninth session). A waiter polls a held lock in quorum mode; a poll that
 * every master answered busy granted nothing and sends no give-back (QuorumStore.giveBack). With
 * one master silent (frozen for a second, asked nothing: see QuorumSilence) its part of every
 * poll counted as "not answered", so each poll sent a give-back, as EVAL, to every answering
 * master: under a minority failure each waiter's polls made twice the commands on the masters
 * left, each carrying the script's text. A silent master was asked nothing and granted nothing:
 * a poll the others all answered busy now sends nothing either.
 */
describe('quorum: a waiter polling a held lock while one master is silent', () => {
  const { servers, app } = useQuorumNodes();

  it('sends the answering masters no give-back for a poll they all answered busy', { timeout: 30_000 }, async () => {
    const holder = await app({ ttl: 10_000 });
    const waiter = await app({ ttl: 10_000 });
    // The release script is loaded on master 0: a give-back there is one command.
    await (await waiter.locks.acquire('warm')).release();
    const held = await holder.locks.acquire('busy');
    servers[2]!.pause();
    // A read leaves master 2 unanswered (a round's end); a second later it is silent.
    await waiter.locks.isLocked('busy');
    await sleep(1_200);
    const master0 = await watchCommands('lock:{busy}', servers[0]!.url);
    // About 20 polls (at most 100 ms apart) of a lock held on masters 0 and 1.
    await expect(waiter.locks.acquire('busy', { waitTimeout: 1_000 })).rejects.toThrow('not acquired');
    await sleep(200);
    await master0.stop();
    // A release's arguments are the lock and the owner token alone (an attempt's are five).
    const scripts = master0.seen.filter(({ args }) => /^eval(sha)?$/i.test(args[0]!));
    const releases = scripts.filter(({ args }) => args.length === 5);
    expect(scripts.length - releases.length).toBeGreaterThan(5);
    // Before: one per poll. Now the waiter's leave alone: sent at once, and again once its last
    // attempt settled.
    expect(releases.length).toBeLessThanOrEqual(2);
    servers[2]!.resume();
    await held.release();
  });
});
