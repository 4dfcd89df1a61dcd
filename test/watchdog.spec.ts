import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ChainableCommander } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockLostError, type LockEvent } from '../lib/index.js';
import { nextEvent, sleep, useLockApps } from './support/lock-app.js';
import { leaseDeadline } from './support/mechanism.js';
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
    const acquiredAt = performance.now();
    const until = acquiredAt + 3_500;
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
    // Each renewal extends the lease by at most one ttl: holding it 3.5 x ttl took at least 3
    // (about 11 on a quiet machine; a loaded one runs fewer, later ticks).
    expect(renewals.length).toBeGreaterThanOrEqual(3);

    await lock.release();
    const held = performance.now() - acquiredAt;
    expect(await redis.exists('lock:{job}')).toBe(0);
    await sleep(1_000);
    await commands.stop();
    subscription.unsubscribe();
    // A renew call behind each renewal, at most one per tick of the time it was held (a loaded
    // machine runs fewer ticks, and may retry a renewal whose reply came late), none after release.
    const renewCalls = commands.seen.filter((c) => lockScriptKind(c) === 'renew').length;
    expect(renewCalls).toBeGreaterThanOrEqual(renewals.length);
    expect(renewCalls).toBeLessThanOrEqual(Math.ceil(held / 300) + 1);
    // In the server's order: no script call after the release (its last send: an EVALSHA that
    // found the script cache cold, as when this file runs first, is sent again as EVAL).
    const releaseAt = commands.seen.findLastIndex((c) => lockScriptKind(c) === 'release');
    expect(releaseAt).toBeGreaterThan(-1);
    expect(commands.seen.slice(releaseAt + 1).filter(isScriptCall)).toEqual([]);
  });

  it.each([
    ['deleted', (m: ChainableCommander) => m.del('lock:{k}')],
    ['overwritten', (m: ChainableCommander) => m.set('lock:{k}', 'new-owner', 'PX', 10_000)],
  ])('reports a lock %s behind its back at the next renewal', async (_how, tamper) => {
    const holder = await app({ ttl: 3_000, renewInterval: 200 });
    const lock = await holder.locks.acquire('k');
    const lost = nextEvent(holder.locks.events$, 'lost');
    await sleep(50);
    const commands = await watchCommands('lock:{k}');
    // One transaction: a renewal between a delete and the new owner's SET would find the key
    // gone (an expiry, not a refusal) and no renewal would come after the SET.
    await tamper(redis.multi()).set('lock:{k}', 'new-owner', 'PX', 10_000).exec();
    await new Promise((resolve) => (lock.signal.aborted ? resolve(undefined) : lock.signal.addEventListener('abort', resolve, { once: true })));
    await commands.stop();
    // The first renewal after the tampering found it, long before the 3 s lease would have run
    // out (that would say 'expired'): one renew call in the server's order, no release.
    const tampered = commands.seen.findLastIndex((c) => c.args[0]!.toLowerCase() === 'set');
    expect(commands.seen.slice(tampered + 1).filter((c) => lockScriptKind(c) === 'renew')).toHaveLength(1);
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
    expect(performance.now()).toBeGreaterThan(leaseDeadline(lock));
    // The deadline timer is due: it runs before any timer set now and before any reply a
    // renewal could get, so the loss is declared on resume, from the deadline alone.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toMatchObject({ reason: 'expired' });
    expect(lock.held).toBe(false);
    await sleep(50);
    expect(await redis.exists('lock:{k}')).toBe(0);
  });

  it('without autoRenew the lock expires after ttl and is reported lost then', async () => {
    const holder = await app({ ttl: 400, autoRenew: false });
    const commands = await watchCommands('lock:{k}');
    const acquiredBefore = performance.now();
    const lock = await holder.locks.acquire('k');
    const deadline = leaseDeadline(lock);
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    // Reported at its deadline (ttl minus the drift margin after the acquire was sent), not before.
    expect(deadline - acquiredBefore).toBeGreaterThan(380);
    expect(performance.now()).toBeGreaterThanOrEqual(deadline);
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
