import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by a defect hunt (s48). The extend() of a multi-key lock its holder released, or released
 * while the extension waited for Redis' answer, said `Lock "account:1" was released...`: a lock of
 * one of its keys, which the caller never took on its own, the other keys unnamed (a bad ttl was
 * named as the call made since 89f162d, `extend(ttl) of the lock of keys ...`, but not these).
 * They now name the lock the caller released, by its keys.
 */
describe.each(useBothStores())('extend() of a multi-key lock that was released ($label)', (backend) => {
  it('after the release, names the lock of every key', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire(['account:1', 'account:2']);
    await lock.release();
    const error = await lock.extend().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toBe('The lock of keys "account:1", "account:2" was released; acquire it again before extending it.');
  });

  it('while the extension waited for its answer, names the lock of every key', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire(['account:1', 'account:2']);
    const extended = lock.extend(5_000).catch((caught: unknown) => caught);
    await lock.release();
    const error = await extended;
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toBe('The lock of keys "account:1", "account:2" was released while extend() waited for its answer: the extension no longer applies.');
  });
});
