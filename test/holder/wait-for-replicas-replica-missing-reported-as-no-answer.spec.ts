/**
 * docs/configuration.md: `waitForReplicas` `{ replicas, timeout? }` (timeout default 1000 ms):
 * every acquisition waits (Redis `WAIT`) until that many replicas have the lock; docs/locks.md:
 * `LockNotReplicatedError` "an acquisition reached fewer replicas than asked within the timeout
 * and was given back".
 *
 * A call that does not wait (`tryAcquire()`, `acquire()` with `waitTimeout` under 1 s, a job's
 * `@Locked` with `onBusy: 'skip'`) bounds its attempt by LAST_ATTEMPT_GRACE_MS (1000 ms), which
 * the default WAIT timeout (1000 ms) fills: when a replica is missing, WAIT answers 0 after its
 * timeout, just after the bound, and the call fails with "Redis did not answer the acquire ...
 * within 1000 ms" although Redis answered every command at once. With a longer WAIT timeout
 * (allowed up to half the ttl) it always does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LockNotReplicatedError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('waitForReplicas with a replica missing', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it.each([1_000, 1_500])('tryAcquire() fails with LockNotReplicatedError (WAIT timeout %i ms), not "Redis did not answer"', { timeout: 20_000 }, async (timeout) => {
    // A server without replicas: WAIT 1 answers 0 once its timeout has passed.
    app = await createLockApp({ redis: own.url(), ttl: 5_000, waitForReplicas: { replicas: 1, timeout } });
    // The attempt's bound leaves a second past WAIT's timeout for the script, WAIT's answer and
    // the give-back, and for the first attempt the replica connection's connecting: a loaded
    // machine took longer (this process held up past the bound while Redis' answers waited to be
    // read), and the call then rightly said Redis did not answer. So it is asked again when it
    // says that, a few times, once what the attempt took was given back: where the bound leaves
    // no room for WAIT, every attempt says it.
    let error: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      error = await app.locks.tryAcquire('replicated:k').then(
        (lock) => (lock === null ? 'busy' : 'acquired'),
        (caught: unknown) => caught,
      );
      if (!String((error as Error | undefined)?.message).includes('did not answer')) break;
      await expect.poll(() => own.redis().exists('lock:{replicated:k}')).toBe(0);
    }
    const cause = (error as { cause?: unknown } | undefined)?.cause;
    // The whole message in the failure's first line (an assertion shortens the values it shows).
    expect({
      notReplicated: error instanceof LockNotReplicatedError || cause instanceof LockNotReplicatedError,
      message: String((error as Error | undefined)?.message),
    }, error instanceof Error ? error.message : String(error)).toEqual({ notReplicated: true, message: expect.not.stringContaining('did not answer') });
    // Given back either way.
    await expect.poll(() => own.redis().exists('lock:{replicated:k}'), { timeout: 3_000 }).toBe(0);
  });
});
