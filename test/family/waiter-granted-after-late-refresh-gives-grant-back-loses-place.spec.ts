import { describe, expect, it } from 'vitest';
import { WAITER_LEASE_MS } from '../../lib/core/engine/waiter-timing.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockService } from '../../lib/index.js';
import { sleep } from '../support/lock-app.js';
import { holdPolls } from '../support/mechanism.js';
import { useProxiedLockApps } from '../support/proxied-lock-apps.js';
import { subscribers, useRedis } from '../support/redis.js';

/**
 * Found from a CI retry of lapsed-waiter-alone-loses-place-with-queue-keys.spec.ts ("expected
 * [ 'second', 'first' ] to deeply equal [ 'first', 'second' ]"). A release hands the lock to the
 * head of the queue on a 1 s grant lease, which the waiter counts from its last attempt (the
 * release ran after Redis answered it). A waiter whose last attempt was answered late (its
 * connection stalled a second: the refresh reached Redis only then) finds that lease used up
 * when the grant comes right after. It then gave the grant back and went on under a new token:
 * the lock went to the waiter behind it, and it was queued again behind that one, though it had
 * kept its place (docs/locks.md, "Dead waiters") and the grant still stood in Redis. It is now
 * confirmed with an attempt under the same token, which takes the lock if the grant stands.
 */
describe('a waiter handed the lock right after its last attempt was answered late', () => {
  const redis = useRedis();
  const { open, throughProxy } = useProxiedLockApps();

  /** When each acquire attempt of `locks` was sent (its clock), and whether it was answered. */
  const recordSends = (locks: LockService) => {
    type Manager = { attempt: (...args: unknown[]) => Promise<unknown>; clock: { now(): number } };
    const manager = locks[LOCK_RUNNER] as unknown as Manager;
    const original = manager.attempt;
    const sends: { at: number; answered: boolean }[] = [];
    manager.attempt = function (this: unknown, ...args: unknown[]) {
      const send = { at: manager.clock.now(), answered: false };
      sends.push(send);
      const reply = original.apply(this, args);
      const settled = () => void (send.answered = true);
      reply.then(settled, settled);
      return reply;
    };
    return { sends, now: () => manager.clock.now() };
  };

  const queued = async (length: number): Promise<void> => {
    while ((await redis.llen('lock:{late-refresh}:queue')) < length) await sleep(10);
  };

  it('keeps its place: it takes the lock before the waiter that queued behind it', async () => {
    const { app: firstApp, proxy } = await throughProxy();
    const holderApp = await open();
    const secondApp = await open();
    const held = await holderApp.locks.acquire('late-refresh');
    const order: string[] = [];
    const served = (name: string) => async (lock: { release(): Promise<void> }) => {
      order.push(name);
      await lock.release();
    };
    // From its first attempt: one may be on its way when the connection stalls.
    const attempts = recordSends(firstApp.locks);
    const first = firstApp.locks.acquire('late-refresh', { waitTimeout: 30_000 }).then(served('first'));
    await queued(1);
    const second = secondApp.locks.acquire('late-refresh', { waitTimeout: 30_000 }).then(served('second'));
    await queued(2);
    await expect.poll(() => subscribers(redis, 'lock:{late-refresh}:released'), { timeout: 10_000 }).toBe(2);
    // The first waiter's connection stalls an attempt of its (a refresh, or one on its way) for a
    // whole grant lease since it was sent; then it reaches Redis, which keeps the waiter's place
    // (the lock stayed held) and answers it.
    proxy.cut();
    let stalled: { at: number; answered: boolean } | undefined;
    await expect.poll(() => (stalled = attempts.sends.find((send) => !send.answered && attempts.now() - send.at > WAITER_LEASE_MS)), { timeout: 10_000 }).toBeDefined();
    // No poll after it (it waits for that answer meanwhile): a release alone wakes it from then on.
    holdPolls(firstApp.locks);
    proxy.heal();
    await expect.poll(() => stalled!.answered, { timeout: 10_000 }).toBe(true);
    expect(attempts.sends.at(-1)).toBe(stalled);
    await held.release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
  }, 30_000);
});
