/**
 * Found by review (thirty-third session). `LockNotReplicatedError` (module option
 * `waitForReplicas`) documents its `key` as "the lock key as Redis names it (with the prefix)",
 * and a mutex's says `lock:{k}`. A semaphore's acquisition (and a reader's) named the holder's own
 * key instead, `lock:{k}:permit:<owner token>` (`lock:{k}:reader:<owner token>`): a key no caller
 * knows, with the acquisition's owner token in the message and in every log line that prints it,
 * the token that the lock board hides behind a digest because the release script takes it, and
 * under which the call goes on retrying until its waitTimeout. It names the lock's key now.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockNotReplicatedError, type LockOptions } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('LockNotReplicatedError of a semaphore or a read lock', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it.each([
    ['a semaphore', { limit: 2 }],
    ['a read lock', { mode: 'read' }],
  ] as [string, LockOptions][])('%s: names the lock key, not the holder key with its owner token', { timeout: 20_000 }, async (_kind, options) => {
    // A server without replicas: WAIT 1 answers 0 once its timeout has passed.
    app = await createLockApp({ redis: own.url(), ttl: 5_000, waitForReplicas: { replicas: 1, timeout: 100 } });
    const error = await app.locks.tryAcquire('replicated:k', options).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    const notReplicated = error instanceof LockNotReplicatedError ? error : (error as { cause?: unknown } | undefined)?.cause;
    expect(notReplicated).toBeInstanceOf(LockNotReplicatedError);
    expect((notReplicated as LockNotReplicatedError).key).toBe('lock:{replicated:k}');
    expect((notReplicated as Error).message).toMatch(/^Lock "lock:\{replicated:k\}" reached 0 of 1 replica/);
    // Given back: nothing of the acquisition is left.
    expect((await own.redis().keys('lock:{replicated:k}*')).filter((key) => !key.endsWith(':fence'))).toEqual([]);
  });
});
