import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (rv31, engine): `extend()` followed by `release()` in the same tick rejected with
 * "was released; acquire it again before extending it", which reads as if the caller had extended
 * a lock it released before. It was released while the extension waited for Redis' answer.
 */
describe.each(useBothStores())('extend() overtaken by release() ($label)', (backend) => {
  it('says the lock was released while the extension was on its way', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire('extend-then-release');
    const extending = lock.extend(20_000).catch((caught: unknown) => caught);
    await lock.release();
    const error = await extending;
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toBe('Lock "extend-then-release" was released while extend() waited for its answer: the extension no longer applies.');
    expect(await app.locks.isLocked('extend-then-release')).toBe(false);
  });

  it('still says "acquire it again" to an extend() after the release', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire('release-then-extend');
    await lock.release();
    await expect(lock.extend(20_000)).rejects.toThrow('Lock "release-then-extend" was released; acquire it again before extending it.');
  });
});
