import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockLostError, type LockEvent } from '../lib/index.js';
import { nextEvent, sleep, useLockApps } from './support/lock-app.js';
import { isScriptCall, lockScriptKind, watchCommands } from './support/monitor.js';
import { redisUrl, useRedis } from './support/redis.js';

describe('watchdog', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('keeps a lock held for 3.5 x ttl away from everyone else, then stops renewing', async () => {
    const holder = await app({ ttl: 1_000, renewInterval: 300 });
    const rival = await app({ ttl: 1_000 });
    const commands = await watchCommands('lock:{job}');
    const renewals: LockEvent[] = [];
    const subscription = holder.locks.events$.subscribe((event) => event.type === 'renewed' && renewals.push(event));

    const lock = await holder.locks.acquire('job');
    const until = performance.now() + 3_500;
    let stolen = 0;
    while (performance.now() < until) {
      if (await rival.locks.tryAcquire('job')) stolen++;
      if ((await redis.set('lock:{job}', 'thief', 'PX', 1_000, 'NX')) === 'OK') stolen++;
      expect(await redis.pttl('lock:{job}')).toBeGreaterThan(0);
      await sleep(50);
    }
    expect(stolen).toBe(0);
    expect(lock.held).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    expect(renewals.length).toBeGreaterThanOrEqual(8);

    await lock.release();
    const releasedAt = performance.now();
    expect(await redis.exists('lock:{job}')).toBe(0);
    await sleep(1_000);
    await commands.stop();
    subscription.unsubscribe();
    // One renew call per renewal (one more if a renewal was in flight when the lock was
    // released: its reply is ignored), none after release.
    const renewCalls = commands.seen.filter((c) => lockScriptKind(c) === 'renew').length;
    expect(renewCalls).toBeGreaterThanOrEqual(renewals.length);
    expect(renewCalls).toBeLessThanOrEqual(renewals.length + 1);
    expect(commands.seen.filter((c) => c.at > releasedAt + 5)).toEqual([]);
  });

  it.each([
    ['deleted', (r: Redis) => r.del('lock:{k}')],
    ['overwritten', (r: Redis) => r.set('lock:{k}', 'new-owner', 'PX', 10_000)],
  ])('reports a lock %s behind its back within one renewal interval', async (_how, tamper) => {
    const holder = await app({ ttl: 3_000, renewInterval: 200 });
    const lock = await holder.locks.acquire('k');
    const lost = nextEvent(holder.locks.events$, 'lost');
    await sleep(50);
    await tamper(redis);
    await redis.set('lock:{k}', 'new-owner', 'PX', 10_000);
    const tamperedAt = performance.now();
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    expect(performance.now() - tamperedAt).toBeLessThan(200 + 150);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(lock.signal.reason).toMatchObject({ key: 'k', fencingToken: lock.fencingToken, reason: 'refused' });
    expect(await lost).toMatchObject({ type: 'lost', key: 'k', reason: 'refused', fencingToken: lock.fencingToken });
    expect(holder.logs.has('error', 'lock lost during renewal')).toBe(true);
    expect(holder.logs.has('error', '"k"')).toBe(true);
    expect(lock.held).toBe(false);
    await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
    await lock.release();
    expect(await redis.get('lock:{k}')).toBe('new-owner');
  });

  it('reports a lock taken while its holder slept between renewals, at release', async () => {
    const holder = await app({ ttl: 5_000, renewInterval: 4_000 });
    const lock = await holder.locks.acquire('k');
    await redis.set('lock:{k}', 'new-owner', 'PX', 10_000);
    await lock.release();
    expect(lock.signal.reason).toMatchObject({ reason: 'refused' });
    expect(await redis.get('lock:{k}')).toBe('new-owner');
  });

  it('declares the lock lost when the event loop was blocked past the lease deadline', async () => {
    const holder = await app({ ttl: 1_000, renewInterval: 300 });
    const lock = await holder.locks.acquire('k');
    const acquiredAt = performance.now();
    // Block the loop until after the local deadline (ttl - drift) but before Redis would expire it.
    while (performance.now() < acquiredAt + 995);
    const resumedAt = performance.now();
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    expect(performance.now() - resumedAt).toBeLessThan(50);
    expect(lock.signal.reason).toMatchObject({ reason: 'expired' });
    expect(lock.held).toBe(false);
    await sleep(50);
    expect(await redis.exists('lock:{k}')).toBe(0);
  });

  it('without autoRenew the lock expires after ttl and is reported lost then', async () => {
    const holder = await app({ ttl: 400, autoRenew: false });
    const commands = await watchCommands('lock:{k}');
    const lock = await holder.locks.acquire('k');
    const acquiredAt = performance.now();
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    const after = performance.now() - acquiredAt;
    // The deadline is ttl minus the drift margin after the acquire was sent; a loaded machine may
    // run the timer a little late.
    expect(after).toBeGreaterThan(380);
    expect(after).toBeLessThan(450);
    expect(lock.signal.reason).toMatchObject({ reason: 'expired' });
    await commands.stop();
    // Only the acquire, then the clean-up of the expired lease: no renewal.
    expect(commands.seen.filter(isScriptCall).length).toBeLessThanOrEqual(2);
  });

  it('extend() renews now and can change the lease length', async () => {
    const holder = await app({ ttl: 1_000 });
    const lock = await holder.locks.acquire('k');
    await lock.extend(20_000);
    expect(await redis.pttl('lock:{k}')).toBeGreaterThan(15_000);
    await sleep(1_200);
    expect(lock.held).toBe(true);
    await lock.extend();
    expect(await redis.pttl('lock:{k}')).toBeGreaterThan(15_000);
    await lock.release();
  });

  it('lets the process exit once its last lock is released, whatever the renewal interval', async () => {
    // The worker's only other handle is an unref'd client: a renewal group left armed for its
    // two idle ticks (20 minutes each with ttl '1h') would keep it alive, and this test would
    // end at its own timeout instead.
    const child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/idle-watchdog-worker.mjs', import.meta.url))], {
      env: { ...process.env, REDIS_URL: redisUrl() },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    onTestFinished(() => void child.kill('SIGKILL'));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(output).toBe('released\nexit\n');
    expect(code).toBe(0);
    expect(await redis.exists('lock:{idle-watchdog}')).toBe(0);
  });
});
