import { describe, expect, it } from 'vitest';
import type { Lock } from '../../lib/index.js';
import { isScriptCall, watchCommands } from '../support/monitor.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * A quorum master's acquire script (QUORUM_ACQUIRE) read the lock's fencing counter (GET) before
 * its first write, on every fenced attempt, granted or busy, so that a counter its INCR would
 * refuse ended it with nothing written (8e5496b). A first grant's one write before the INCR is
 * the lock its SET NX created: it now takes that write back on a refusal (DEL, before the
 * refusal is answered), as the one-server fast paths do (4184a4d), and a busy lock writes
 * nothing, so neither reads the counter ahead. Only a grant again to the owner token that holds
 * the lock there still looks first: its write is a PEXPIRE of a lease it did not read.
 */
describe("quorum: a master's acquire script", () => {
  const { servers, app } = useQuorumNodes();

  /** The commands master 0's scripts ran on the lock `key`'s keys while `run` ran, script calls left out. */
  async function scriptCommands(key: string, run: () => Promise<unknown>): Promise<string[]> {
    const base = `lock:{${key}}`;
    const watch = await watchCommands(base, servers[0]!.url, (arg) => arg.startsWith(base));
    try {
      await run();
    } finally {
      await watch.stop();
    }
    return watch.seen.filter((command) => !isScriptCall(command)).map(({ args }) => `${args[0]!.toUpperCase()} ${args[1]}`);
  }

  it('reads no fencing counter ahead of a first grant or of a busy answer', { timeout: 30_000 }, async () => {
    const holder = await app({ ttl: 10_000 });
    const rival = await app({ ttl: 10_000 });
    // The scripts loaded: EVALSHA alone from now on.
    await (await holder.locks.acquire('ahead-warm')).release();
    let lock: Lock | undefined;
    const granted = await scriptCommands('ahead', async () => (lock = await holder.locks.acquire('ahead')));
    try {
      expect(granted).toEqual(['SET lock:{ahead}', 'INCR lock:{ahead}:fence', 'SET lock:{ahead}:fence']);
      const busy = await scriptCommands('ahead', () => rival.locks.tryAcquire('ahead'));
      expect(busy.slice(0, 3)).toEqual(['SET lock:{ahead}', 'GET lock:{ahead}', 'PTTL lock:{ahead}']);
      expect(busy.filter((command) => command.endsWith(':fence')).filter((command) => !command.startsWith('PEXPIRE'))).toEqual([]);
    } finally {
      await lock?.release();
    }
  });
});
