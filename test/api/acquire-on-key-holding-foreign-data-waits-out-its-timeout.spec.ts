import { afterEach, describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { lockScriptKind, watchCommands } from '../support/monitor.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review. A key of a lock that holds data this library did not write (another
 * application writing under the key prefix: a hash at `lock:{k}`, a word at its fencing counter)
 * makes Redis refuse every acquire script with WRONGTYPE or "value is not an integer". The call
 * treated that as Redis not answering: it attempted again until its `waitTimeout` ran out (a
 * minute, for a route), then failed `LockNotAcquiredError` "Redis did not answer (WRONGTYPE ...).
 * Raise waitTimeout to wait longer": Redis had answered, and waiting longer changes nothing. The
 * call now fails at its first refusal with a `RedisLockError` saying what is wrong and what to
 * do, as `tryAcquire()` does, and leaves nothing of its own in Redis.
 */
describe('an acquisition whose lock keys hold data of another kind', () => {
  const redis = useRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it.each([
    ['a hash at the lock key', 'lock:{foreign-hash}', 'foreign-hash', () => redis.hset('lock:{foreign-hash}', 'field', '1'), /WRONGTYPE/],
    ['a word at its fencing counter', 'lock:{foreign-fence}:fence', 'foreign-fence', () => redis.set('lock:{foreign-fence}:fence', 'abc'), /not an integer/],
  ])('%s: fails at the first refusal, saying so, and leaves nothing of its own', { timeout: 30_000 }, async (_what, foreign, key, write, refusal) => {
    app = await createLockApp({});
    await write();
    const commands = await watchCommands(`lock:{${key}}`, undefined, (arg) => arg.startsWith(`lock:{${key}}`));
    const error = await app.locks.acquire(key, { waitTimeout: 60_000 }).catch((caught: unknown) => caught);
    await commands.stop();
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(refusal);
    expect((error as Error).message).toMatch(/holds data this library did not write/);
    expect((error as Error).message).toMatch(/keyPrefix/);
    // One attempt (a second only when the script cache was cold: EVALSHA, then EVAL).
    const attempts = commands.seen.filter((command) => lockScriptKind(command) === 'acquire');
    expect(attempts.length).toBeLessThanOrEqual(2);
    expect(await redis.keys(`lock:{${key}}*`)).toEqual([foreign]);
    // tryAcquire() says the same.
    const tried = await app.locks.tryAcquire(key).catch((caught: unknown) => caught);
    expect(tried).toBeInstanceOf(RedisLockError);
    expect((tried as Error).message).toMatch(/holds data this library did not write/);
  });

  it('is named so by isLocked(), inspect() and the extend() of a lock whose key was overwritten', { timeout: 30_000 }, async () => {
    app = await createLockApp({});
    await redis.hset('lock:{foreign-read}', 'field', '1');
    const said = (promise: Promise<unknown>): Promise<string> => promise.then((value) => `answered ${String(value)}`, (caught: Error) => `${caught.constructor.name}: ${caught.message}`);
    const held = await app.locks.acquire('foreign-extend');
    await redis.multi().del('lock:{foreign-extend}').hset('lock:{foreign-extend}', 'field', '1').exec();
    const answers = [await said(app.locks.isLocked('foreign-read')), await said(app.locks.inspect('foreign-read')), await said(held.extend())];
    for (const answer of answers) expect(answer).toMatch(/^RedisLockError: .*holds data this library did not write.*keyPrefix/);
    await redis.del('lock:{foreign-read}', 'lock:{foreign-extend}');
  });
});
