/**
 * Found by review (engine): `app.close()` aborted every holder's signal and gave every held lock
 * back at once, in `beforeApplicationShutdown`, which Nest runs before it closes the HTTP server
 * and waits for the requests in flight. A `using()` or `@Locked` call that went on working (one
 * that does not look at its signal, or cannot stop at once) then ran without its lock while
 * another instance took the key: two holders of one key at every rolling deploy. Jobs and
 * leaders were already told to stop and kept their locks while they wound down. Now a lock whose
 * call is running is kept (its signal aborts, it is renewed) until the call ends, within two
 * thirds of `shutdownTimeout`; past that it is given back as before.
 */
import { describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('app.close() while a using() call is in its critical section', () => {
  const own = useOwnRedis();

  it('keeps the lock until the call ends, its signal aborted (reason shutdown)', { timeout: 20_000 }, async () => {
    const a = await createLockApp({ redis: own.url(), shutdownTimeout: 6_000 });
    const b = await createLockApp({ redis: own.url() });
    let aInside = false;
    let signalReason: unknown;
    let endWork: (() => void) | undefined;
    let told!: Promise<unknown>;
    const work = a.locks.using('deploy:k', async (lock) => {
      told = new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
      aInside = true;
      // A request that does not stop on its signal: it ends when the test says.
      await new Promise<void>((resolve) => (endWork = resolve));
      signalReason = lock.signal.reason;
      aInside = false;
    });
    await expect.poll(() => endWork !== undefined).toBe(true);
    const closing = a.close();
    // The close has begun and told the call to stop: a still holds the key while its call works.
    await told;
    const taken = b.locks.acquire('deploy:k', { waitTimeout: 10_000 }).then((lock) => ({ lock, aInside }));
    await sleep(100);
    expect(await own.redis().exists('lock:{deploy:k}')).toBe(1);
    endWork!();
    const { lock, aInside: overlapped } = await taken;
    expect({ overlapped, shutdown: signalReason instanceof LockLostError && signalReason.reason === 'shutdown' }).toEqual({ overlapped: false, shutdown: true });
    await lock.release();
    await work;
    await closing;
    await b.close();
  });

  it('gives the lock back once two thirds of shutdownTimeout passed, for a call that never ends', { timeout: 20_000 }, async () => {
    const a = await createLockApp({ redis: own.url(), shutdownTimeout: 900 });
    let inside = false;
    const work = a.locks.using('deploy:stuck', () => {
      inside = true;
      return new Promise<void>(() => undefined);
    });
    void work.catch(() => undefined);
    await expect.poll(() => inside).toBe(true);
    await a.close();
    expect(await own.redis().exists('lock:{deploy:stuck}')).toBe(0);
  });
});
