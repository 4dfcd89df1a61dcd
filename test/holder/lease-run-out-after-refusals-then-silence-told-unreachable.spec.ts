import { describe, expect, it, onTestFinished } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { useFrozenRedis } from '../support/frozen-redis.js';
import { createLockApp } from '../support/lock-app.js';

/**
 * Review of d652ab9d (session 51): a held lock whose renewals Redis refused for now (READONLY here,
 * a master demoted to a replica, as LOADING) and which then stopped answering (frozen: SIGSTOP, a
 * network cut that resets nothing) loses its lease to the silence, not to the refusal: the renewals
 * sent last went unanswered. The loss says "Redis unreachable", with no `cause`, as a lease run out
 * under silence alone does. Found so: it said "the lease ran out while Redis refused its renewals
 * for now (READONLY ...)", the refusal before the silence kept as its cause.
 */
describe('a held lock whose renewals Redis refused for now, then did not answer, until its lease ran out', () => {
  const frozen = useFrozenRedis();

  it('is lost saying Redis was unreachable, without the earlier refusal as its cause', { timeout: 30_000 }, async () => {
    const app = frozen.opened(await createLockApp({ redis: frozen.url(), ttl: 1_500, renewInterval: 300 }));
    const admin = frozen.redis();
    onTestFinished(async () => {
      frozen.server().resume();
      await admin.replicaof('NO', 'ONE');
    });
    const lock = await app.locks.acquire('refused-then-silent');
    const refused = async () => Number(/errorstat_READONLY:count=(\d+)/.exec(await admin.info('errorstats'))?.[1] ?? 0);
    const before = await refused();
    // A replica of a master that is not there: every write (a renewal) refused READONLY.
    await admin.replicaof('127.0.0.1', '1');
    await expect.poll(refused, { timeout: 5_000, interval: 50 }).toBeGreaterThan(before);
    frozen.server().pause();
    await expect.poll(() => lock.signal.aborted, { timeout: 10_000, interval: 50 }).toBe(true);
    const error = lock.signal.reason as LockLostError;
    expect(error).toBeInstanceOf(LockLostError);
    expect(error.reason).toBe('expired');
    // Failed: '... was lost: the lease ran out while Redis refused its renewals for now (READONLY You can't write against a read only replica).'
    expect(error.message).toMatch(/the lease ran out before a renewal succeeded \(Redis unreachable or the event loop blocked\)\.$/);
    expect(error.cause).toBeUndefined();
  });
});
