import { afterEach, describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (forty-fourth session). A call with `waitTimeout: 0` on a busy lock was refused
 * as `Lock "k" was not acquired within 3 ms: another holder kept it`, the time its one attempt's
 * round trip took: read as a wait of 3 ms the caller had asked for, when it had asked for none
 * (and with `waitTimeout: 1` as a wait of 1 ms that came to 3). The message now says what the
 * caller asked: no wait, or the waitTimeout it gave and how long the call took.
 */
describe('the busy error of a call that asked not to wait, or to wait very little', () => {
  const redis = useRedis();
  let app: LockApp;
  afterEach(() => app?.close());

  it('says the call did not wait (waitTimeout 0), naming no wait in ms', async () => {
    app = await createLockApp();
    await redis.set('lock:{k}', 'someone-else', 'PX', 10_000);
    const error = await app.locks.acquire('k', { waitTimeout: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toBe(
      'Lock "k" was not acquired: another holder kept it, and the call did not wait (waitTimeout 0). ' +
        'Raise waitTimeout to wait for it, or handle LockNotAcquiredError as "busy".',
    );
  });

  it('names the waitTimeout asked beside the time the call took', async () => {
    app = await createLockApp();
    await redis.set('lock:{k}', 'someone-else', 'PX', 10_000);
    const error = await app.locks.acquire('k', { waitTimeout: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(/^Lock "k" was not acquired within its waitTimeout of 1 ms \(\d+ ms after the call\): another holder kept it\. Raise waitTimeout/);
  });
});
