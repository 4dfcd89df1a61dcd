import { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { Lock, LockService } from '../../lib/index.js';
import type { MemoryData } from '../../lib/core/stores/memory/memory-data.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { redisUrl } from './redis.js';

type Notifier = { subscribed?(channel: string): boolean };

/** Whether the application listens on a release channel (true for a store that has no subscription to wait for). */
export const subscribed = (locks: LockService, channel: string): boolean => (locks[LOCK_RUNNER] as unknown as { notifier?: Notifier }).notifier?.subscribed?.(channel) ?? true;

/**
 * Deletes a holder's own key (`<lock>:reader:<token>`, `<lock>:permit:<token>`), as its lease
 * running out during a stall, or an eviction, would: on the test Redis, or in the in-memory store
 * behind `locks`. `kind` names the key's part before the holder's token. Returns whether it was there.
 */
export async function lapseHolderKey(store: 'redis' | 'memory', locks: LockService, key: string, kind: 'reader' | 'permit', holder: Lock): Promise<boolean> {
  const name = `lock:{${key}}:${kind}:${(holder as unknown as { token: string }).token}`;
  if (store === 'memory') {
    const backend = (locks[LOCK_RUNNER] as unknown as { store: { data?: MemoryData; readers?: { data: MemoryData } } }).store;
    return (backend.data ?? backend.readers?.data)?.locks.delete(name) === true;
  }
  const redis = new Redis(redisUrl());
  try {
    return (await redis.del(name)) === 1;
  } finally {
    redis.disconnect();
  }
}

/**
 * `call` once it settles, polled for up to `timeout` ms: a waiter whose polls are held
 * (`holdPolls`) settles only when a wake-up reaches it, so this fails ("expected false to be
 * true") when none does.
 */
export async function woken<T>(call: Promise<T>, timeout = 8_000): Promise<T> {
  let settled = false;
  void call.then(
    () => (settled = true),
    () => (settled = true),
  );
  await expect.poll(() => settled, { timeout }).toBe(true);
  return call;
}
