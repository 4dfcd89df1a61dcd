import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../testing/manual-clock.js';
import { lockRedisKeys } from '../../keys/lock-key.js';
import { readKeys } from '../../rwlock/read-keys.js';
import { MemoryData, MemoryStore } from './memory-store.js';

/** Like Redis, every part of the in-memory store treats a key as gone only once its expiry has passed. */
describe('the in-memory store at the exact millisecond a lease ends', () => {
  it('still counts a reader, so no writer gets in beside it', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore(new MemoryData(), clock, () => undefined);
    const base = lockRedisKeys('lock:', 'k');
    const reader = readKeys(base, 'r1', 'k');
    expect(await store.readers.acquire(reader, 'r1', 1_000, false, 1_000)).toMatchObject({ acquired: true });
    await clock.advance(1_000);
    expect(await store.acquire(base, 'w1', 1_000, false, 1_000)).toMatchObject({ acquired: false });
    expect(await store.renew(reader.lock, 'r1', 1_000)).toBe(true);
  });
});
