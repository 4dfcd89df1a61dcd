/**
 * Found by review (s48, obs). At `app.close()` a `using()` call still running is told to stop (its
 * lock's signal aborts with a `shutdown` LockLostError) and keeps its lock until it ends, then
 * releases it: a lock of one key reads as released (`lock.hold.duration` when the call gives it
 * back, no `lock.lost`). A multi-key lock (`using([a, b])`) read as lost at the moment its signal
 * aborted: `lock.lost` counted it with `lock.lost.reason: shutdown`, and `lock.active` read 0 while
 * the call still held its keys, winding down. The lock metrics count a multi-key lock as one lock,
 * as its caller sees it (docs/observability.md): released, as one key's.
 *
 * Now a multi-key lock is told lost at a shutdown only when a key is given back under it (a lock
 * held past the running calls' wait, or taken with acquire()), as one key's is.
 */
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('lock metrics of a multi-key call running at the close', () => {
  useRedis();
  const lockMetrics = useLockMetrics();
  const { points } = lockMetrics;
  const of = async <T>(metric: string, name: string): Promise<T | undefined> => (await points<T>(metric)).find((point) => point.attributes['lock.name'] === name)?.value;

  it.each([
    ['one key', 'close-one', ['close-one-a']],
    ['two keys', 'close-pair', ['close-pair-a', 'close-pair-b']],
  ] as const)('counts the lock of %s released when the call gives it back, not lost', async (_, name, keys) => {
    lockMetrics.enable();
    const app = await createLockApp({ shutdownTimeout: '10s' });
    let closing: Promise<void> | undefined;
    try {
      const run = async (lock: { signal: AbortSignal }): Promise<void> => {
        closing = app.close();
        await expect.poll(() => lock.signal.reason).toMatchObject({ reason: 'shutdown' });
        // Told to stop, the call still holds its lock while it winds down.
        expect(await of('lock.active', name)).toBe(1);
      };
      await (keys.length === 1 ? app.locks.using(keys[0], run, { name }) : app.locks.using(keys, run, { name }));
    } finally {
      await (closing ?? app.close());
    }
    expect(await of('lock.active', name)).toBe(0);
    expect((await of<Histogram>('lock.hold.duration', name))?.count).toBe(1);
    // Before: the two-key lock read 1 lost (lock.lost.reason: shutdown).
    expect(await of('lock.lost', name)).toBeUndefined();
  });

  it.each([
    ['one key', 'held-one', ['held-one-a']],
    ['two keys', 'held-pair', ['held-pair-a', 'held-pair-b']],
  ] as const)('still counts the lock of %s taken with acquire() and given back by the close lost (shutdown)', async (_, name, keys) => {
    lockMetrics.enable();
    const app = await createLockApp({ shutdownTimeout: '10s' });
    try {
      await (keys.length === 1 ? app.locks.acquire(keys[0], { name }) : app.locks.acquire(keys, { name }));
      expect(await of('lock.active', name)).toBe(1);
    } finally {
      await app.close();
    }
    expect(await of('lock.active', name)).toBe(0);
    expect(await lockMetrics.value('lock.lost', { 'lock.name': name, 'lock.lost.reason': 'shutdown' })).toBe(1);
  });
});
