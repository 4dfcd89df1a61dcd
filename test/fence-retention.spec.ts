import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Test } from '@nestjs/testing';
import { InvalidLockOptionsError, RedisLockModule, type LockOptions } from '../lib/index.js';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import { CapturedLogs, sleep, useLockApps } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

const WEEK = 7 * 24 * 3_600_000;

describe('fencing counters', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('are kept forever by default: no expiry on the fence key', async () => {
    const { locks } = await app();
    const lock = await locks.acquire('kept');
    await lock.release();
    expect(await redis.get('lock:{kept}:fence')).toBe(String(lock.fencingToken));
    expect(await redis.pttl('lock:{kept}:fence')).toBe(-1);
  });

  it('with fenceRetention, expire that long after the last token, and later acquisitions still work', async () => {
    const { locks } = await app({ fenceRetention: '7d' });
    const first = await locks.acquire('retained');
    const ttl = await redis.pttl('lock:{retained}:fence');
    expect(ttl).toBeGreaterThan(WEEK - 60_000);
    expect(ttl).toBeLessThanOrEqual(WEEK);
    await first.release();
    // Shorten the expiry, as if the week were almost over: the next token restarts it.
    await redis.pexpire('lock:{retained}:fence', 5_000);
    const second = await locks.acquire('retained');
    expect(second.fencingToken).toBe(first.fencingToken + 1);
    expect(await redis.pttl('lock:{retained}:fence')).toBeGreaterThan(WEEK - 60_000);
    await second.release();
  });

  it('with fenceRetention, start again above the last token once the counter of an idle key has expired', async () => {
    const { locks } = await app({ fenceRetention: WEEK });
    const first = await locks.acquire('idle');
    await first.release();
    await redis.pexpire('lock:{idle}:fence', 1);
    await sleep(20);
    const again = await locks.acquire('idle');
    // The new counter starts at the server's clock in ms: above the old one, which handed out
    // fewer tokens than milliseconds went by (see NEXT_FENCING).
    expect(again.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(await redis.get('lock:{idle}:fence')).toBe(String(again.fencingToken));
    await again.release();
  });

  it('with fenceRetention, also expire when a release hands the lock to a waiter', async () => {
    const holder = await app({ fenceRetention: WEEK, ttl: 30_000 });
    const waiter = await app({ fenceRetention: WEEK, ttl: 30_000 });
    const held = await holder.locks.acquire('handed');
    const waiting = waiter.locks.acquire('handed', { waitTimeout: 10_000 });
    while ((await redis.exists('lock:{handed}:queue')) === 0) await sleep(5);
    await redis.persist('lock:{handed}:fence');
    await held.release();
    const lock = await waiting;
    // The grant's token, or the next one when the release came before the waiter's subscription
    // and its next attempt confirmed the grant.
    expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
    expect(await redis.pttl('lock:{handed}:fence')).toBeGreaterThan(WEEK - 60_000);
    await lock.release();
  });

  it('with fenceRetention, keep an expiry when quorum mode raises a node counter', async () => {
    const client = new Redis(redisUrl());
    try {
      await new LockScripts(client, WEEK).fenceFloor('lock:{floor}:fence', 7);
      expect(await redis.get('lock:{floor}:fence')).toBe('7');
      expect(await redis.pttl('lock:{floor}:fence')).toBeGreaterThan(WEEK - 60_000);
      await new LockScripts(client).fenceFloor('lock:{floor-kept}:fence', 7);
      expect(await redis.pttl('lock:{floor-kept}:fence')).toBe(-1);
    } finally {
      await client.quit();
    }
  });

  it.each<[string, unknown, { ttl?: number }?]>([
    ['too short for a retention', 1_000],
    ['shorter than the ttl', 90_000, { ttl: 120_000 }],
    ['not an integer', 60_000.5],
    ['a malformed duration', '1 hour'],
    ['null', null],
    ['negative', -1],
  ])('refuse a fenceRetention that is %s, naming the option', async (_what, fenceRetention, extra = {}) => {
    const compiling = Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), ...extra, fenceRetention: fenceRetention as number })],
    })
      .setLogger(new CapturedLogs())
      .compile();
    const error = await compiling.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('fenceRetention');
    expect((error as Error).message).toContain('Option "fenceRetention"');
  });
});

describe('a call whose own ttl is longer than the fenceRetention', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('is refused at call time, naming both options, whichever way the lock is taken', async () => {
    const { locks } = await app({ fenceRetention: '2m' });
    const calls: [string, (options: LockOptions) => Promise<unknown>][] = [
      ['acquire', (options) => locks.acquire('too-long', options)],
      ['tryAcquire', (options) => locks.tryAcquire('too-long', options)],
      ['using', (options) => locks.using('too-long', () => undefined, options)],
      ['a semaphore', (options) => locks.acquire('too-long', { ...options, limit: 2 })],
      ['a read lock', (options) => locks.acquire('too-long', { ...options, mode: 'read' })],
      ['several keys', (options) => locks.acquire(['too-long', 'too-long-2'], options)],
    ];
    for (const [what, call] of calls) {
      const error = await call({ ttl: '3m' }).catch((e: unknown) => e);
      expect(error, what).toBeInstanceOf(InvalidLockOptionsError);
      expect((error as InvalidLockOptionsError).option, what).toBe('ttl');
      expect((error as Error).message, what).toContain('Option "ttl"');
      expect((error as Error).message, what).toContain('fenceRetention (120000 ms)');
    }
    expect(await locks.isLocked('too-long')).toBe(false);
    // Up to the retention is fine.
    const lock = await locks.acquire('too-long', { ttl: '2m' });
    await lock.release();
  });

  it('is refused by extend(), which would make the lease that long, and the lock keeps its lease', async () => {
    const { locks } = await app({ fenceRetention: '2m' });
    const lock = await locks.acquire('too-long', { ttl: '1m' });
    const error = await lock.extend('3m').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('ttl');
    expect((error as Error).message).toContain('fenceRetention (120000 ms)');
    expect(await redis.pttl('lock:{too-long}')).toBeLessThanOrEqual(60_000);
    expect(lock.held).toBe(true);
    // Up to the retention is fine.
    await lock.extend('2m');
    expect(await redis.pttl('lock:{too-long}')).toBeGreaterThan(60_000);
    await lock.release();
  });
});
