import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { LockApp } from './lock-app.js';

/** The error lines `app` logged. */
export const loggedErrors = (app: LockApp): string[] => app.logs.lines.filter((line) => line.level === 'error').map((line) => line.message);

/**
 * On one Redis (`admin`'s): a waiter of `waiter` on a lock someone else holds, whose release
 * subscriber connection (the one subscribed to a plain channel) is killed there once it is
 * subscribed; waits until `waiter` logged exactly the error `stopped` (the client's reconnect
 * strategy gave the connection up), then frees the lock and releases what the waiter got by polling.
 */
export async function killSubscriberOfWaiter(waiter: LockApp, admin: Redis, stopped: RegExp): Promise<void> {
  expect(await admin.set('lock:{given-up}', 'someone', 'PX', 20_000)).toBe('OK');
  const waiting = waiter.locks.acquire('given-up', { waitTimeout: '20s' });
  waiting.catch(() => undefined);
  const subscriber = async (): Promise<string | undefined> => String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n').find((entry) => /\bsub=1\b/.test(entry));
  await expect.poll(subscriber, { timeout: 10_000 }).toBeDefined();
  expect(Number(await admin.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec((await subscriber())!)![1]!))).toBe(1);
  await expect.poll(() => loggedErrors(waiter), { timeout: 10_000 }).toEqual([expect.stringMatching(stopped)]);
  // Still served, by polling.
  await admin.del('lock:{given-up}');
  await (await waiting).release();
}
