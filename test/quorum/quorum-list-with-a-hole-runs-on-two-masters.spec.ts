import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review (fortieth session). A quorum list with a hole (`[a, , c]`, or an array given a
 * length and filled in part) passed the option checks, whose `map` skips holes, as three
 * masters; the connections were opened the same way, so the application ran on two masters, a
 * majority of both: the one master down that the third was there to survive stopped every lock,
 * the case the checks refuse for a list of two. The hole is now refused, named by its place.
 */
describe('quorum: a list of masters with a hole in it', () => {
  const servers = useQuorumServers();

  it('is refused at startup, the hole named', { timeout: 30_000 }, async () => {
    const redis: string[] = new Array<string>(3);
    redis[0] = servers[0]!.url;
    redis[2] = servers[2]!.url;
    const starting = createLockApp({ redis: redis as never });
    // Before: started, on masters 0 and 2 alone.
    await expect(starting.then((app) => app.close())).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(createLockApp({ redis: redis as never })).rejects.toThrow(/Option "redis\[1\]" .*got undefined/);
  });
});
