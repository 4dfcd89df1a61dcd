import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import { LockLostError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (thirty-fourth session): a read lock whose key `P{K}` (holding `~r`) is gone from
 * Redis (an operator's `DEL`, an eviction) lets a writer in at once, and the reader learns of it at
 * its next renewal, which finds its guard missing. But when the writer released and new readers
 * were let in before that renewal, `~r` was written again beside the old hash `P{K}:readers`,
 * which still named the old reader: its renewal found both guards and went on, and the reader
 * never learned that a writer had held the key beside it. A new set of readers now starts a new
 * readers hash, so the old reader's next renewal is refused and its signal aborts.
 */
describe('a reader whose read lock key was deleted, then taken by a writer and by new readers', () => {
  const redis = useRedis();
  const open = useLockApps();

  it('is told at its next renewal that it lost the lock', async () => {
    const first = await open();
    const other = await open();
    const key = 'doc:1';
    const reader = await first.locks.acquire(key, { mode: 'read', ttl: 3_000 });
    await redis.del('lock:{doc:1}');
    // The key is free in Redis: a writer takes it, and gives it back to new readers.
    const writer = await other.locks.acquire(key, { waitTimeout: 0 });
    await writer.release();
    const newReader = await other.locks.acquire(key, { mode: 'read', waitTimeout: 0 });
    // The old reader's next renewal (or its loss) is what tells it.
    const next = await firstValueFrom(first.locks.events$.pipe(filter((event) => event.type === 'renewed' || event.type === 'lost')));
    expect(next.type).toBe('lost');
    expect(reader.held).toBe(false);
    expect(reader.signal.reason).toBeInstanceOf(LockLostError);
    expect((reader.signal.reason as LockLostError).reason).toBe('refused');
    // The new reader holds on.
    expect(newReader.held).toBe(true);
    await newReader.release();
    expect(await first.locks.isLocked(key)).toBe(false);
  });
});
