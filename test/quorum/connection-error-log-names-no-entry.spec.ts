import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review (fortieth session). In quorum mode each entry gets a connection of its own,
 * and a connection's failure was logged as `Redis connection error: <message>`, as with one
 * Redis: with a message that names no server (a refused login), the operator could not tell
 * which of the masters it was. The entry is named now (`redis[i]`).
 */
describe('quorum: a connection error of one entry', () => {
  const servers = useQuorumServers();

  it('is logged naming the entry', { timeout: 30_000 }, async () => {
    const wrong = new URL(servers[1]!.url);
    wrong.username = 'nobody';
    wrong.password = 'wrong';
    const app = await createLockApp({ redis: [servers[0]!.url, wrong.toString(), servers[2]!.url] });
    try {
      // Held on the other two.
      await (await app.locks.acquire('logged')).release();
      await expect.poll(() => app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toContainEqual(expect.stringMatching(/WRONGPASS/));
      // Before: "Redis connection error: WRONGPASS invalid username-password pair or user is disabled."
      expect(app.logs.lines.find((line) => /WRONGPASS/.test(line.message))!.message).toMatch(/^Redis connection error \(redis\[1\]\): WRONGPASS/);
    } finally {
      await app.close();
    }
  });
});
