import { describe, expect, it } from 'vitest';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Suspected in the thirty-ninth session, shown in the fortieth. app.close() sends again the
 * releases a master has not confirmed, and waits for the answers of the masters that are not
 * silent (test/quorum/close-waits-shutdown-timeout-for-silent-master.spec.ts). A master frozen
 * less than a second before the close is not silent yet (QuorumSilence: a second without an
 * answer), so the close waited for its answer, which a frozen master never gives: the whole
 * `shutdownTimeout`, though the lock was released on the majority at once. A master that
 * answers nothing for a second while the close waits now counts as silent there too: the resend
 * is written to its connection (it runs once the master resumes), its answer not waited for.
 */
describe('quorum: app.close() right after a minority master froze', () => {
  const { servers, app, get } = useQuorumNodes();

  it('does not wait shutdownTimeout for that master, and the release still reaches it', { timeout: 60_000 }, async () => {
    // Far longer than the test: a close that waits for the frozen master cannot end in it.
    const quorum = await app({ ttl: 30_000, shutdownTimeout: '120s' });
    const lock = await quorum.locks.acquire('frozen-late');
    // The round ends at an agreeing majority: master 2's grant may land a moment later.
    await expect.poll(() => get(2, 'lock:{frozen-late}')).not.toBeNull();
    servers[2]!.pause();
    // Released on masters 0 and 1; master 2's release is left unanswered, and it is not silent.
    await lock.release();
    let closed = false;
    void quorum.close().then(() => (closed = true));
    // Before: still closing after 15 s, waiting all of shutdownTimeout for master 2's answer.
    await expect.poll(() => closed, { timeout: 15_000 }).toBe(true);
    servers[2]!.resume();
    // Its copy (a 30 s lease) is deleted by the release written to its connection.
    await expect.poll(() => get(2, 'lock:{frozen-late}'), { timeout: 5_000 }).toBeNull();
  });
});
