import { describe, expect, it } from 'vitest';
import type { LockEvent } from '../lib/index.js';
import { blockRedis } from './support/block-redis.js';
import { sleep, useLockApps } from './support/lock-app.js';
import { blockEventLoop } from './support/mechanism.js';
import { useOwnRedis } from './support/redis.js';

describe('a held lock', () => {
  // A server of its own: a test blocks it, which would hold up the renewals of files beside it.
  const own = useOwnRedis();
  const apps = useLockApps();
  const app = (options: Parameters<typeof apps>[0]) => apps({ redis: own.url(), ...options });

  it('is not tracked or reported renewed again by a renewal reply that lands during release()', async () => {
    const { locks } = await app({ ttl: 5_000 });
    const lock = await locks.acquire('k');
    const events: LockEvent['type'][] = [];
    locks.events$.subscribe((event) => events.push(event.type));
    const { ended } = await blockRedis(own.url(), 300);
    const extending = lock.extend().catch((e: unknown) => e); // a renewal in flight...
    await lock.release(); // ...when the release starts
    await extending;
    await ended;
    expect(events).toEqual(['released']);
    expect(lock.signal.aborted).toBe(false);
    // Nothing is left to expire it: past its lease, it is still a normally released lock.
    await sleep(50);
    expect(lock.held).toBe(false);
  });

  it('after extend(ttl) is renewed every ttl/3 of the new ttl', async () => {
    const { locks } = await app({ ttl: 6_000 });
    const lock = await locks.acquire('k');
    await lock.extend('600ms');
    let renewals = 0;
    locks.events$.subscribe((event) => event.type === 'renewed' && renewals++);
    const watchedFrom = performance.now();
    await sleep(1_300);
    const watched = performance.now() - watchedFrom;
    // 200 ms interval: about 6 in 1.3 s, fewer on a loaded machine, never more than the time
    // watched allows (the default 2 s interval would give none).
    expect(renewals).toBeGreaterThanOrEqual(2);
    expect(renewals).toBeLessThanOrEqual(Math.ceil(watched / 200) + 1);
    expect(await own.redis().pttl('lock:{k}')).toBeLessThanOrEqual(600);
    await lock.release();
  });

  // The deadline sweeper's timer cannot run while the event loop is held up (a GC pause, a
  // CPU-bound call, a SIGSTOP): code that asks `held` right after such a stall, in the same turn,
  // must learn of the loss then, not after the next timer.
  it('reports a lease that ran out during a stalled event loop when held is read, before any timer ran', async () => {
    const { locks } = await app({ ttl: 300, autoRenew: false });
    const events: string[] = [];
    locks.events$.subscribe((event) => events.push(event.type));
    const one = await locks.acquire('stall-one');
    const both = await locks.acquire(['stall-a', 'stall-b']);
    blockEventLoop(400);
    expect(one.held).toBe(false);
    expect(one.signal.aborted).toBe(true);
    expect(one.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'expired' });
    expect(both.held).toBe(false);
    expect(both.signal.aborted).toBe(true);
    expect(events.filter((type) => type === 'lost')).toHaveLength(3);
    // Given back at once: nothing of them is left in Redis.
    await sleep(50);
    expect(await own.redis().exists('lock:{stall-one}', 'lock:{stall-a}', 'lock:{stall-b}')).toBe(0);
  });

  // Reading the signal does not check the deadline: an abort listener added to the signal read
  // right after a stall would never run on a signal already aborted.
  it('runs an abort listener added right after a stalled event loop, through the deadline timer', async () => {
    const { locks } = await app({ ttl: 300, autoRenew: false });
    const lock = await locks.acquire('stall-listener');
    blockEventLoop(400);
    const heard = new Promise<unknown>((resolve) => lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }));
    expect(await heard).toMatchObject({ name: 'LockLostError', reason: 'expired' });
  });
});
