import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import {
  InvalidLockOptionsError,
  LockLostError,
  LockService,
  RedisLockError,
  RedisLockModule,
  type RedisLockModuleOptions,
} from '../lib/index.js';
import { countAttempts, releaseBetweenPolls } from './support/mechanism.js';
import { CapturedLogs, createLockApp, nextEvent } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

@Injectable()
class LockConfig {
  readonly url = redisUrl();
  readonly ttl = 4_000;
}

@Module({ providers: [LockConfig], exports: [LockConfig] })
class ConfigModule {}

describe('RedisLockModule', () => {
  const redis = useRedis();
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('forRootAsync builds the options from a factory with injected config', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RedisLockModule.forRootAsync({
          imports: [ConfigModule],
          inject: [LockConfig],
          useFactory: async (config: LockConfig): Promise<RedisLockModuleOptions> => ({ redis: config.url, ttl: config.ttl, keyPrefix: 'async:' }),
        }),
      ],
    }).compile();
    closers.push(() => moduleRef.close());
    const lock = await moduleRef.get(LockService).acquire('k');
    expect(await redis.exists('async:{k}')).toBe(1);
    expect(await redis.pttl('async:{k}')).toBeGreaterThan(3_000);
    expect(await redis.pttl('async:{k}')).toBeLessThanOrEqual(4_000);
    await lock.release();
  });

  it('isGlobal makes LockService injectable in modules that do not import it', async () => {
    @Injectable()
    class Consumer {
      constructor(readonly locks: LockService) {}
    }
    @Module({ providers: [Consumer] })
    class FeatureModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), FeatureModule],
    }).compile();
    closers.push(() => moduleRef.close());
    expect(moduleRef.get(Consumer).locks).toBeInstanceOf(LockService);
  });

  it.each<[string, Partial<RedisLockModuleOptions>]>([
    ['redis', { redis: 'not a url' }],
    ['ttl', { ttl: 0 }],
    ['renewInterval', { ttl: 1_000, renewInterval: 5_000 }],
    ['waitTimeout', { waitTimeout: -1 }],
    ['keyPrefix', { keyPrefix: '{x}' }],
    ['autoRenew', { autoRenew: 1 as unknown as boolean }],
    ['shutdownTimeout', { shutdownTimeout: 1.5 }],
  ])('refuses to start with a bad %s, naming it', async (option, patch) => {
    const compiling = Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), ...patch })],
    })
      .setLogger(new CapturedLogs())
      .compile();
    const error = await compiling.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe(option);
    expect((error as Error).message).toContain(`Option "${option}"`);
  });

  it('uses a client handed in without ever closing it', async () => {
    const client = new Redis(redisUrl());
    const app = await createLockApp({ redis: client });
    const lock = await app.locks.acquire('k');
    expect(await client.get('lock:{k}')).toBeTruthy();
    await lock.release();
    await app.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });

  it("works with a client that has ioredis' own keyPrefix: keys, renewals and release messages", async () => {
    const client = new Redis(redisUrl(), { keyPrefix: 'tenant1:' });
    const other = new Redis(redisUrl(), { keyPrefix: 'tenant1:' });
    const holderApp = await createLockApp({ redis: client, ttl: 1_000, renewInterval: 100 });
    const waiterApp = await createLockApp({ redis: other, ttl: 30_000 });
    try {
      const held = await holderApp.locks.acquire('k');
      expect(await redis.exists('tenant1:lock:{k}')).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 300)); // batched renewals use the prefix too
      expect(held.held).toBe(true);
      const attempts = countAttempts(waiterApp.locks);
      const waiting = waiterApp.locks.acquire('k', { waitTimeout: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { lock, attemptsSinceRelease } = await releaseBetweenPolls(attempts, held, waiting);
      expect(attemptsSinceRelease).toBe(0); // woken by the message, not by polling
      await lock.release();
      expect(await redis.exists('tenant1:lock:{k}')).toBe(0);
    } finally {
      await holderApp.close();
      await waiterApp.close();
      client.disconnect();
      other.disconnect();
    }
  });

  it('lets a release that failed (connection closed) be retried, and stops renewing meanwhile', async () => {
    const client = new Redis(redisUrl());
    const app = await createLockApp({ redis: client, ttl: 5_000, renewInterval: 100 });
    try {
      const lock = await app.locks.acquire('k');
      const released = nextEvent(app.locks.events$, 'released');
      client.disconnect();
      await expect(lock.release()).rejects.toThrow(/Connection is closed/);
      // Metrics and listeners see the holder done with it, though Redis did not confirm.
      expect(await released).toMatchObject({ key: 'k', unconfirmed: true });
      expect(lock.held).toBe(false);
      expect(lock.signal.aborted).toBe(false);
      await client.connect();
      expect(await redis.exists('lock:{k}')).toBe(1);
      await lock.release();
      expect(await redis.exists('lock:{k}')).toBe(0);
    } finally {
      await app.close();
      client.disconnect();
    }
  });

  it('accepts ioredis options and closes the connection it opened', async () => {
    const { hostname, port, pathname } = new URL(redisUrl());
    const connectionName = `owned-${process.pid}-${Date.now()}`;
    const app = await createLockApp({ redis: { host: hostname, port: Number(port), db: Number(pathname.slice(1)), connectionName } });
    await app.locks.using('k', async () => expect(await redis.exists('lock:{k}')).toBe(1));
    // Other test files share the server: look for this connection by its name, not by count.
    expect(String(await redis.client('LIST'))).toContain(`name=${connectionName}`);
    await app.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(String(await redis.client('LIST'))).not.toContain(`name=${connectionName}`);
  });

  it('at shutdown tells holders, releases their locks and refuses new ones', async () => {
    const app = await createLockApp({ ttl: 10_000 });
    const a = await app.locks.acquire('a');
    const b = await app.locks.acquire('b');
    const lost = nextEvent(app.locks.events$, 'lost');
    await app.close();
    for (const lock of [a, b]) {
      expect(lock.signal.aborted).toBe(true);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lock.signal.reason).toMatchObject({ reason: 'shutdown' });
    }
    expect(await lost).toMatchObject({ reason: 'shutdown' });
    expect(await redis.exists('lock:{a}', 'lock:{b}')).toBe(0);
    expect(app.logs.has('warn', 'still held at shutdown')).toBe(true);
    await expect(app.locks.acquire('a')).rejects.toThrow(RedisLockError);
    await expect(app.locks.acquire('a')).rejects.toThrow(/shut down/);
    await expect(app.locks.isLocked('a')).rejects.toThrow(/shut down/);
  });

  it('at shutdown ends waits for busy locks at once', async () => {
    const app = await createLockApp({ waitTimeout: 30_000 });
    await redis.set('lock:{busy}', 'other-process', 'PX', 30_000);
    const waiting = app.locks.acquire('busy').catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await app.close();
    const error = await waiting;
    // Far less than the 30 s wait (and the holder's 30 s lease) that shutdown would otherwise sit out.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toMatch(/shut down/);
    expect(await redis.exists('lock:{busy}:queue')).toBe(0);
  });
});
