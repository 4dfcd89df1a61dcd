import { describe, expect, it } from 'vitest';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review (thirty-ninth session). docs/deployment.md: quorum mode takes "3 or 5
 * independent masters, not replicas". An entry that reaches a replica (a URL copied from the
 * wrong line, a replica behind a load balancer) was accepted without a word: the replica refuses
 * every write (READONLY), so each of its parts counts as failed, and quorum mode runs on the other
 * entries, one failure from stopping every lock, while its reads repeat its master's copies (two
 * votes for one server in isLocked() and inspect(), when its master is another entry). The
 * startup check that reads each entry's `INFO` now logs such an entry as an error, as it does one
 * server listed twice.
 */
describe('quorum mode with an entry that reaches a replica', () => {
  const { servers, app, admin } = useQuorumNodes();

  it('logs that entry at startup as a replica, naming it and its master', { timeout: 30_000 }, async () => {
    // The replica loads its master's data from the socket, not through a file in the working directory.
    await admin(2, (node) => node.config('SET', 'repl-diskless-load', 'swapdb'));
    await admin(2, (node) => node.replicaof('127.0.0.1', servers[0]!.port));
    try {
      await expect.poll(() => admin(2, (node) => node.info('replication')), { timeout: 10_000 }).toContain('master_link_status:up');
      const quorum = await app({ ttl: 2_000 });
      // Locks still work, on masters 0 and 1.
      await (await quorum.locks.acquire('k')).release();
      await expect.poll(() => quorum.logs.lines.filter((line) => line.level === 'error').map((line) => line.message), { timeout: 5_000 }).toEqual([
        expect.stringMatching(new RegExp(`redis\\[2\\] is a replica \\(of 127\\.0\\.0\\.1:${servers[0]!.port}\\)`)),
      ]);
    } finally {
      await admin(2, (node) => node.replicaof('NO', 'ONE'));
    }
  });
});
