import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review (fortieth session). ioredis options given as a quorum entry with a port no
 * server can have (a string that is no number, say from an unset environment variable's
 * fallback, a negative one, one above 65535) passed the option checks; the connection of that
 * entry then failed every command, and in quorum mode the application started and ran on the
 * other masters without a word at startup: one failure less survived, and with three masters
 * the next one down stopped every lock. Such a port is now refused at startup, named
 * (`redis[i].port`).
 */
describe('quorum: an entry whose port no server can have', () => {
  const servers = useQuorumServers();

  for (const port of ['abc', -1, 70_000, 6379.5]) {
    it(`is refused at startup, the entry named (port ${JSON.stringify(port)})`, { timeout: 30_000 }, async () => {
      const redis = [{ host: '127.0.0.1', port }, servers[1]!.url, servers[2]!.url];
      const starting = createLockApp({ redis: redis as never });
      // Before: started, on masters 1 and 2 alone.
      await expect(starting.then((app) => app.close())).rejects.toBeInstanceOf(InvalidLockOptionsError);
      await expect(createLockApp({ redis: redis as never })).rejects.toThrow(/Option "redis\[0\]\.port" .*got /);
    });
  }
});
