import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LockOptions } from '../../lib/index.js';
import { ChaosWorker, monotonicMs } from '../chaos/support/chaos-worker.js';
import { report } from '../chaos/support/report.js';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * The chaos scenarios of test/chaos (event loop stalled, process paused, Redis killed, network
 * cut) for each kind of the lock family, run by the chaos worker with LOCK_OPTIONS / KEYS.
 * `holder` is the kind that holds; `rival` what a competitor takes (a writer against a reader).
 */
interface Kind {
  name: string;
  holder: (base: string) => Record<string, string>;
  rival: (base: string) => Record<string, string>;
  rivalCall: (base: string) => [string | string[], LockOptions | undefined];
}

const KINDS: Kind[] = [
  {
    name: 'semaphore',
    holder: (base) => ({ KEY: base, LOCK_OPTIONS: '{"limit":1}' }),
    rival: (base) => ({ KEY: base, LOCK_OPTIONS: '{"limit":1}' }),
    rivalCall: (base) => [base, { limit: 1 }],
  },
  {
    name: 'read lock',
    holder: (base) => ({ KEY: base, LOCK_OPTIONS: '{"mode":"read"}' }),
    rival: (base) => ({ KEY: base }),
    rivalCall: (base) => [base, undefined],
  },
  {
    name: 'multi-key lock',
    holder: (base) => ({ KEYS: JSON.stringify([`${base}:a`, `${base}:b`]) }),
    rival: (base) => ({ KEYS: JSON.stringify([`${base}:b`, `${base}:a`]) }),
    rivalCall: (base) => [[`${base}:b`, `${base}:a`], undefined],
  },
];

const TTL = 1_000;
const slug = (name: string): string => name.replace(/\W+/g, '-');

describe.each(KINDS)('chaos for the lock family: $name', (kind) => {
  describe('on the shared test Redis', () => {
    useRedis();
    let rival: LockApp | undefined;
    let proxy: TcpProxy | undefined;
    afterEach(async () => {
      await rival?.close();
      rival = undefined;
      proxy?.close();
      proxy = undefined;
    });

    it('a holder whose event loop stalls past its lease learns the loss as it resumes', { timeout: 30_000 }, async () => {
      const base = `stall-${slug(kind.name)}`;
      const worker = ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'stall', TTL, RENEW: 300, STALL: 1_500, ...kind.holder(base) }, 'stall');
      const result = await worker.next<{ lost: string; detectedAfterResume: number; lostOnResume: boolean }>('lost');
      await worker.exitsOnItsOwn(2_000);
      report(`stall ${kind.name}`, { reason: result.lost, msFromResumeToLoss: result.detectedAfterResume });
      expect(result.lost).toMatch(/expired|refused/);
      // Declared from the due deadline timer, before a timer set on resume runs.
      expect(result.lostOnResume).toBe(true);
    });

    it('a holder paused past its lease is replaced, learns the loss on resuming, and its release spares the new holder', { timeout: 30_000 }, async () => {
      const base = `pause-${slug(kind.name)}`;
      const holder = ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'hold', TTL, RENEW: 300, ...kind.holder(base) }, 'hold');
      const { acquired: pausedToken } = await holder.next<{ acquired: number }>('acquired');
      rival = await createLockApp();
      holder.child.kill('SIGSTOP');
      const [key, options] = kind.rivalCall(base);
      const lock = await rival.locks.acquire(key as string, { ...options, waitTimeout: 5_000 });
      // The rival is in: the paused holder's lease ran out in Redis, and so did its own deadline,
      // which the holder counts from before Redis took the lease (no further sleep needed).
      const resumedAt = monotonicMs();
      holder.child.kill('SIGCONT');
      const loss = await holder.next<{ lost: string; at: number }>('lost');
      holder.send('release');
      await holder.exitsOnItsOwn(2_000);
      const stillHeld = await lock.extend().then(() => true, () => false);
      await lock.release();
      report(`pause ${kind.name}`, { msFromResumeToAbort: loss.at - resumedAt, pausedToken, rivalToken: lock.fencingToken });
      // Told on resume (before it is asked to release); the bound only stops a hang.
      expect(loss.lost).toMatch(/expired|refused/);
      expect(loss.at - resumedAt).toBeLessThan(5_000);
      expect(lock.fencingToken).toBeGreaterThan(pausedToken);
      expect(stillHeld).toBe(true);
    });

    it('a network cut tells the holder by its deadline, and a waiter gets in once it heals', { timeout: 60_000 }, async () => {
      proxy = await TcpProxy.start(Number(new URL(redisUrl()).port));
      const url = `${proxy.url}${new URL(redisUrl()).pathname}`;
      const base = `cut-${slug(kind.name)}`;
      const holder = ChaosWorker.start({ REDIS_URL: url, MODE: 'hold', TTL, RENEW: 300, ...kind.holder(base) }, 'hold');
      await holder.next('acquired');
      const cutAt = monotonicMs();
      proxy.cut();
      const loss = await holder.next<{ lost: string; at: number; deadline: number }>('lost');
      const patient = ChaosWorker.start({ REDIS_URL: url, MODE: 'wait', WAIT: 20_000, ...kind.rival(base) }, 'wait-patient');
      await new Promise((resolve) => setTimeout(resolve, 800));
      proxy.heal();
      const after = await patient.next<{ acquired?: number; error?: string }>('waited');
      holder.send('release');
      await Promise.all([holder, patient].map((worker) => worker.exitsOnItsOwn(2_000)));
      report(`network-cut ${kind.name}`, { msFromCutToLoss: loss.at - cutAt, msAfterDeadline: loss.at - loss.deadline, patient: after.error ?? 'acquired after heal' });
      // By the deadline timer, not before the deadline a renewal answered before the cut set
      // (the worker's estimate of it may lie a few ms after the engine's).
      expect(loss.lost).toBe('expired');
      expect(loss.at).toBeGreaterThan(loss.deadline - 5);
      expect(loss.deadline - cutAt).toBeLessThan(TTL);
      expect(after.acquired).toBeGreaterThanOrEqual(1);
    });
  });

  describe('on a Redis server that is killed', () => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await startRedisServer();
    });
    afterAll(() => server.stop());

    it('tells the holder by its lease deadline, and serves a waiter after the restart', { timeout: 60_000 }, async () => {
      const base = `kill-${slug(kind.name)}`;
      const holder = ChaosWorker.start({ REDIS_URL: server.url, MODE: 'hold', TTL, RENEW: 300, ...kind.holder(base) }, 'hold');
      await holder.next('acquired');
      const patient = ChaosWorker.start({ REDIS_URL: server.url, MODE: 'wait', WAIT: 20_000, ...kind.rival(base) }, 'wait-patient');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const killedAt = monotonicMs();
      await server.stop({ kill: true });
      const loss = await holder.next<{ lost: string; at: number; deadline: number }>('lost');
      await new Promise((resolve) => setTimeout(resolve, 500));
      await server.start();
      const after = await patient.next<{ acquired?: number; error?: string }>('waited');
      holder.send('release');
      await Promise.all([holder, patient].map((worker) => worker.exitsOnItsOwn(2_000)));
      report(`redis-kill ${kind.name}`, { msFromKillToLoss: loss.at - killedAt, msAfterDeadline: loss.at - loss.deadline, patient: after.error ?? 'acquired after restart' });
      // By the deadline timer, not before the deadline a renewal answered before the kill set.
      expect(loss.lost).toBe('expired');
      expect(loss.at).toBeGreaterThan(loss.deadline - 5);
      expect(loss.deadline - killedAt).toBeLessThan(TTL);
      expect(after.acquired).toBeGreaterThanOrEqual(1);
    });
  });
});
