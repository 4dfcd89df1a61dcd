import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import type { LockApp } from '../support/lock-app.js';
import { useQuorumAclUser } from '../support/quorum-acl-user.js';

/**
 * Found by review: in quorum mode, an `isLocked()` or `inspect()` that a majority of the masters
 * refused in a way asking again cannot change (the module's Redis user may not touch the lock's
 * keys: NOPERM) said "Quorum not reached to check the lock: 1 of 3 Redis nodes answered, 2
 * needed (node 0: NOPERM ...; node 1: NOPERM ...)", the replies without what to fix, where one
 * Redis says the user may not touch the lock's keys, asking again changes nothing, and to grant
 * the ACL what docs/deployment.md lists. They now say so, as an acquisition refused so by a
 * majority does; a minority's refusal still leaves the majority's answer.
 */
describe('quorum: reads refused for good by a majority', () => {
  const { app: userApp, rules } = useQuorumAclUser('reads');

  it.each([
    ['isLocked', (app: LockApp) => app.locks.isLocked('refused-read')],
    ['inspect', (app: LockApp) => app.locks.inspect('refused-read')],
  ])('%s() names the refusal and what to fix', async (_call, read) => {
    const app = await userApp({ shutdownTimeout: 2_000 });
    // Its connections up (a first read may find them connecting on a loaded machine).
    await expect.poll(() => app.locks.isLocked('refused-read').catch(() => undefined)).toBe(false);
    // Taken away once the module runs: the lock's keys on two masters of three.
    await rules([0, 1], 'resetkeys');
    const error = await read(app).then(
      (value) => value,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisLockError);
    const message = (error as Error).message;
    expect(message).toMatch(/^Quorum not reached to (check|inspect) the lock: 2 of 3 Redis nodes refused it in a way asking again cannot change/);
    expect(message).toContain('NOPERM');
    expect(message).toContain('asking again changes nothing');
    expect(message).toContain('grant that user\'s ACL what docs/deployment.md lists');
    expect((error as Error).cause).toBeInstanceOf(Error);
  });
});
