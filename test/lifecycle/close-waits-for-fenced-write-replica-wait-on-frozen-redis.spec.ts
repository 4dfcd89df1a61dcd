/**
 * docs/fencing.md, "Redis: FencedRedis": the injected `FencedRedis` waits for Redis only until
 * `app.close()` has given the module's locks back; a write Redis has not answered then rejects as
 * one whose reply never came (it may have been applied), and one whose replicas had not confirmed
 * it then says it is on the master only.
 *
 * Found by a defect hunt (session 49): with `waitForReplicas`, a fenced write is the script and
 * then `WAIT` on the acquisitions' connection. Only the script's reply was bounded by the close:
 * a `WAIT` on a Redis that froze after running the script (a replica down, so `WAIT` blocked for
 * its timeout) was awaited with no bound, and Nest's HTTP server close waits for the request
 * before the module's connections are closed: `app.close()` did not end for as long as Redis
 * stayed frozen. It rejects then, saying that the write is on the master, its replicas unconfirmed.
 */
import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { closesWithin } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useReplicatedServer } from '../support/replicated-server.js';

const seen: unknown[] = [];
/** The second request holds its lock and writes once the test paused the replica. */
let holding: () => void = () => undefined;
let replicaDown: Promise<void> = Promise.resolve();

@Controller('wallet')
class WalletController {
  constructor(
    private readonly locks: LockService,
    private readonly fenced: FencedRedis,
  ) {}

  @Get('deposit')
  deposit(): Promise<string> {
    return this.locks.using('wallet:{7}', async (lock) => {
      holding();
      await replicaDown;
      try {
        await this.fenced.hset('wallet:{7}:data', 'balance', 120, lock.fencingToken);
        return 'ok';
      } catch (error) {
        seen.push(error);
        throw error;
      }
    }, { ttl: 30_000 });
  }
}

describe('app.close() while a route awaits the replicas of a FencedRedis write (waitForReplicas) on a Redis that froze after running it', () => {
  const servers = useReplicatedServer();

  it('ends within shutdownTimeout, and the write rejects saying it is on the master only, unconfirmed', { timeout: 60_000 }, async () => {
    const logs = new CapturedLogs();
    const outside = new Redis(servers.master.url);
    const app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: servers.master.url, ttl: 30_000, waitForReplicas: { replicas: 1, timeout: 10_000 }, shutdownTimeout: '1s' })],
      controllers: [WalletController],
    }, { logs });
    let closed = false;
    try {
      const url = `${await listenOnLoopback(app)}/wallet/deposit`;
      // Connected, and written and replicated once, with the replica up.
      expect(await (await fetch(url)).text()).toBe('ok');
      const firstToken = Number(await outside.hget('{7}:fence', 'wallet:{7}:data'));
      const held = new Promise<void>((resolve) => (holding = resolve));
      let down!: () => void;
      replicaDown = new Promise<void>((resolve) => (down = resolve));
      const request = fetch(url).then((res) => res.status, (error: Error) => error.message);
      await held;
      servers.replica.pause();
      down();
      // The script has run (its token is on the master): its WAIT waits for the paused replica.
      await expect.poll(async () => Number(await outside.hget('{7}:fence', 'wallet:{7}:data'))).toBeGreaterThan(firstToken);
      servers.master.pause();
      // shutdownTimeout is 1 s, the WAIT's timeout 10 s: give the close 20 s.
      await closesWithin(app, 20_000);
      closed = true;
      expect(typeof (await request)).toBe('number');
      expect(seen).toHaveLength(1);
      expect(seen[0]).toBeInstanceOf(RedisLockError);
      expect((seen[0] as Error).message).toMatch(/^FencedRedis\.hset\(\): the write to "wallet:\{7\}:data" was applied with fencing token \d+ on the master, but no replica's confirmation came \(waitForReplicas: WAIT 1 10000 failed, LockService shut down/);
    } finally {
      servers.master.resume();
      servers.replica.resume();
      if (!closed) await app.close().catch(() => undefined);
      outside.disconnect();
    }
  });
});
