import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError, LockService, Locked, RedisLockModule } from '../lib/index.js';
import { CapturedLogs, createLockApp, nextEvent } from './support/lock-app.js';
import { leaseDeadline } from './support/mechanism.js';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

/** These tests stop and freeze Redis, so they get a server of their own. */
describe('when Redis goes away', () => {
  let server: RedisServer;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    server = await startRedisServer();
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    server.resume();
    await server.stop();
  });

  it('aborts the signal before the lease could have expired, and works again once Redis is back', async () => {
    const app = await createLockApp({ redis: server.url, ttl: 1_000, renewInterval: 300 });
    try {
      const lock = await app.locks.acquire('k');
      const renewed = await nextEvent(app.locks.events$, 'renewed');
      expect(renewed.key).toBe('k');
      const aborted = new Promise<number>((resolve) => lock.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }));
      const killedAt = performance.now();
      await server.stop({ kill: true });
      const abortedAt = await aborted;
      // By the deadline timer, at the deadline the last renewal (started before the kill) set:
      // under one ttl after the kill, so before Redis could have let the lease go.
      expect(abortedAt).toBeGreaterThanOrEqual(leaseDeadline(lock));
      expect(leaseDeadline(lock) - killedAt).toBeLessThan(1_000);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lock.signal.reason).toMatchObject({ reason: 'expired' });
      expect(app.logs.has('error', 'lock lost during renewal')).toBe(true);

      // Waiters while Redis is down get a clear error naming the cause.
      const waiting = await app.locks.acquire('other', { waitTimeout: 300 }).catch((e: unknown) => e);
      expect(waiting).toBeInstanceOf(LockNotAcquiredError);
      expect((waiting as Error).message).toMatch(/Redis did not answer/);

      await server.start();
      const again = await app.locks.acquire('k', { waitTimeout: 10_000 });
      expect(again.held).toBe(true);
      await again.release();
      await lock.release().catch(() => undefined);
      expect(unhandled).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('reports the loss on time while Redis is frozen and renewals hang', async () => {
    const app = await createLockApp({ redis: server.url, ttl: 1_000, renewInterval: 300, shutdownTimeout: 300 });
    try {
      const lock = await app.locks.acquire('k');
      const frozenAt = performance.now();
      server.pause();
      await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
      // At the deadline set before the freeze, not after a renewal that never comes back.
      expect(performance.now()).toBeGreaterThanOrEqual(leaseDeadline(lock));
      expect(leaseDeadline(lock) - frozenAt).toBeLessThan(1_000);
      expect(lock.signal.reason).toMatchObject({ reason: 'expired' });

      // Shutdown must not hang on commands a frozen server never answers.
      const held = await (async () => {
        server.resume();
        const next = await app.locks.acquire('held', { waitTimeout: 5_000 });
        server.pause();
        return next;
      })();
      const closing = performance.now();
      await app.close();
      // shutdownTimeout is 300 ms; without it the close would wait for ever. The bound only stops a hang.
      expect(performance.now() - closing).toBeLessThan(10_000);
      expect(held.signal.reason).toMatchObject({ reason: 'shutdown' });
    } finally {
      server.resume();
      await app.close();
    }
    expect(unhandled).toEqual([]);
  });

  it("ends an acquire in flight at its bound, not with the process, when the client is unref'd", async () => {
    const admin = new Redis(server.url);
    const pid = /process_id:(\d+)/.exec(await admin.info('server'))![1]!;
    admin.disconnect();
    // The worker freezes Redis, unrefs its node-redis client and asks for a lock: nothing but
    // the acquire itself keeps its event loop alive.
    const child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/unref-client-worker.mjs', import.meta.url))], {
      env: { ...process.env, REDIS_URL: server.url, REDIS_PID: pid },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await once(child, 'exit');
    } finally {
      server.resume();
    }
    expect(output).toBe('rejected: LockNotAcquiredError\nexit\n');
  });
});

@Injectable()
class NightlyJob {
  runs = 0;
  constructor(readonly locks: LockService) {}

  @Locked('nightly', { waitTimeout: 0, onBusy: 'skip' })
  async run(): Promise<string> {
    this.runs++;
    return 'ran';
  }
}

describe("onBusy: 'skip' when Redis is down", () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server.stop());

  it('rejects instead of silently skipping the work', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: server.url })],
      providers: [NightlyJob],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const job = moduleRef.get(NightlyJob);
    try {
      await expect(job.run()).resolves.toBe('ran');
      const held = await job.locks.acquire('nightly');
      await expect(job.run()).resolves.toBeUndefined(); // busy: skipped
      await held.release();
      await server.stop({ kill: true });
      const error = await job.run().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockNotAcquiredError);
      expect((error as Error).cause).toBeInstanceOf(Error);
      expect(job.runs).toBe(1);
    } finally {
      await server.start();
      await moduleRef.close();
    }
  });
});
