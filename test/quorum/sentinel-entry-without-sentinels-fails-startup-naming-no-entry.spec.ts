import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review (fortieth session). Sentinel options with no Sentinel to ask (`sentinels: []`,
 * an environment variable's list that came out empty) or no group name passed the option checks,
 * and the startup failed with ioredis' own `Error` ("Requires at least one sentinel to connect
 * to."): not an `InvalidLockOptionsError`, and in quorum mode with no word of which entry it was.
 * They are refused by the option checks now, the entry named.
 */
describe('quorum: Sentinel options with no Sentinel or no group name', () => {
  const servers = useQuorumServers();

  const cases: [string, object, RegExp][] = [
    ['no Sentinel', { sentinels: [], name: 'm0' }, /Option "redis\[1\]\.sentinels" must be .*got an array/],
    ['no group name', { sentinels: [{ host: '127.0.0.1', port: 26379 }] }, /Option "redis\[1\]\.name" must be .*got undefined/],
  ];
  for (const [what, entry, message] of cases) {
    it(`is refused at startup, the entry named (${what})`, { timeout: 30_000 }, async () => {
      const redis = [servers[0]!.url, entry, servers[2]!.url];
      // Before: ioredis' Error: "Requires at least one sentinel to connect to.", "Requires the name of master."
      await expect(createLockApp({ redis: redis as never })).rejects.toBeInstanceOf(InvalidLockOptionsError);
      await expect(createLockApp({ redis: redis as never })).rejects.toThrow(message);
    });
  }
});
