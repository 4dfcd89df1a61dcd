import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_DIAGNOSTICS_CHANNELS, type LockEvent } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('node:diagnostics_channel', () => {
  useRedis();
  const app = useLockApps();
  const subscriptions: [string, (message: unknown) => void][] = [];
  afterEach(() => {
    for (const [name, fn] of subscriptions.splice(0)) unsubscribe(name, fn);
  });

  function listen(): { type: string; event: LockEvent }[] {
    const seen: { type: string; event: LockEvent }[] = [];
    for (const [type, name] of Object.entries(LOCK_DIAGNOSTICS_CHANNELS)) {
      const fn = (message: unknown) => seen.push({ type, event: message as LockEvent });
      subscribe(name, fn);
      subscriptions.push([name, fn]);
    }
    return seen;
  }

  it('publishes every lock event on its documented channel, with name and wait flags', async () => {
    const holder = await app();
    const waiter = await app();
    const seen = listen();
    const lock = await holder.locks.acquire('diag:1', { name: 'diag:<id>' });
    const waiting = waiter.locks.acquire('diag:1', { name: 'diag:<id>', waitTimeout: 10_000 });
    await expect.poll(() => seen.some(({ type }) => type === 'waiting')).toBe(true);
    await lock.release();
    const second = await waiting;
    expect(await holder.locks.tryAcquire('diag:1', { name: 'diag:<id>' })).toBeNull();
    await second.release();
    const types = seen.map(({ type }) => type);
    expect(types).toEqual(expect.arrayContaining(['acquired', 'waiting', 'released', 'not-acquired']));
    for (const { type, event } of seen) expect(event.type).toBe(type);
    expect(seen.find(({ type }) => type === 'waiting')!.event).toMatchObject({ key: 'diag:1', name: 'diag:<id>' });
    const acquisitions = seen.filter(({ type }) => type === 'acquired').map(({ event }) => event);
    expect(acquisitions[0]).toMatchObject({ name: 'diag:<id>', afterWaiting: false });
    expect(acquisitions[1]).toMatchObject({ name: 'diag:<id>', afterWaiting: true });
    expect(seen.find(({ type }) => type === 'released')!.event).toMatchObject({ name: 'diag:<id>', key: 'diag:1' });
  });

  it('reports why a call did not get the lock: busy, timeout, aborted', async () => {
    const holder = await app();
    const other = await app();
    const seen = listen();
    const lock = await holder.locks.acquire('diag:2');
    expect(await other.locks.tryAcquire('diag:2')).toBeNull();
    await expect(other.locks.acquire('diag:2', { waitTimeout: 1_000 })).rejects.toThrow();
    const controller = new AbortController();
    const aborted = other.locks.acquire('diag:2', { waitTimeout: 10_000, signal: controller.signal });
    await expect.poll(() => seen.filter(({ type }) => type === 'waiting').length).toBe(2);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    await lock.release();
    const outcomes = seen.filter(({ type }) => type === 'not-acquired').map(({ event }) => event);
    expect(outcomes).toMatchObject([
      { outcome: 'busy', afterWaiting: false },
      { outcome: 'timeout', afterWaiting: true },
      { outcome: 'aborted', afterWaiting: true },
    ]);
  });

  it('builds no event at all while nobody subscribes', async () => {
    const { locks } = await app();
    const manager = locks[LOCK_RUNNER] as LockManager;
    expect(manager.listening).toBe(false);
    listen();
    expect(manager.listening).toBe(true);
    for (const [name, fn] of subscriptions.splice(0)) unsubscribe(name, fn);
    expect(manager.listening).toBe(false);
  });
});
