/**
 * docs/configuration.md, "Shutdown: what app.close() does": no code awaiting Redis (an HTTP
 * request the server waits for before it closes) holds the close up past `shutdownTimeout`.
 *
 * Found by review (session 42): a route writing through the module's `FencedRedis` (on the
 * module's own connection) while Redis froze awaited the write with no bound: its `using()` call
 * was waited for two thirds of `shutdownTimeout` and its lock given back, but Nest's HTTP server
 * close waits for the request, and the module's connection is closed only in
 * onApplicationShutdown, after it: `app.close()` did not end for as long as Redis was frozen.
 * The module's FencedRedis now stops waiting once the close has given its locks back.
 */
import 'reflect-metadata';
import { Controller, Get } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';

const seen: unknown[] = [];
/** The second request holds its lock and writes once the test froze Redis. */
let holding: () => void = () => undefined;
let frozen: Promise<void> = Promise.resolve();

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
      await frozen;
      try {
        await this.fenced.hset('wallet:{7}:data', 'balance', 120, lock.fencingToken);
        return 'ok';
      } catch (error) {
        seen.push(error);
        throw error;
      }
    });
  }
}

describe('app.close() while a route awaits a FencedRedis write on a frozen Redis', () => {
  const own = useFrozenRedis();

  it('ends within shutdownTimeout, and the write rejects saying it may have been applied', { timeout: 60_000 }, async () => {
    const app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s' })],
      controllers: [WalletController],
    }, { logs: new CapturedLogs() });
    own.opened(app);
    const url = `${await listenOnLoopback(app)}/wallet/deposit`;
    // Connected, and written once, before the freeze.
    expect(await (await fetch(url)).text()).toBe('ok');
    const held = new Promise<void>((resolve) => (holding = resolve));
    let freeze!: () => void;
    frozen = new Promise<void>((resolve) => (freeze = resolve));
    const request = fetch(url).then((res) => res.status, (error: Error) => error.message);
    await held;
    own.server().pause();
    freeze();
    // The write on its way to the frozen Redis.
    await sleep(200);
    // shutdownTimeout is 1 s: give the close 15 s.
    console.log('close took', await closesWithin(app, Number(process.env.REVIEW_WAIT ?? 15_000)));
    expect(typeof (await request)).toBe('number');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(RedisLockError);
    expect((seen[0] as Error).message).toMatch(/^FencedRedis\.hset\(\): the write to "wallet:\{7\}:data" may have been applied/);
  });
});
