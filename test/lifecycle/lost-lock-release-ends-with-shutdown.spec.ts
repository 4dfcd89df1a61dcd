/**
 * docs/configuration.md (0695033): "All of that within `shutdownTimeout`; a release Redis has
 * still not answered then (a frozen server) ends with it, so that no code awaiting it (an HTTP
 * request the server waits for before it closes) holds the close up: a holder's `release()`
 * rejects with a `RedisLockError`, and a `release()` after the module gave the lock back
 * resolves."
 *
 * Found by review of 0695033; before the fix, LockManager.giveBackAll ended only the releases of locks in `heldLocks`
 * (at its start or its end). A lock that was LOST before the close (here: refused on renewal,
 * as when its key was taken or expired in Redis) is forgotten at once; its holder's `release()`
 * (which `@Locked` and `using()` always call) is still sent, bounded only by the deadline
 * sweeper at `now + ttl` (HeldLock.releaseInRedis, the `!wasHeld` branch). Nothing ends it at
 * shutdown:
 *  - with a client handed in, the release is still pending after `app.close()` resolved, for
 *    as long as Redis is frozen (the sweeper is closed);
 *  - with the module's own connection, a @Locked route whose lock was lost holds the HTTP
 *    server's close (Nest disposes it before onApplicationShutdown closes the connection), so
 *    `app.close()` takes the lock's whole ttl (8 s here) instead of `shutdownTimeout` (1 s).
 * Older than 0695033. The manager now also keeps the lost locks whose release is on its way,
 * and ends those at shutdown too.
 */
import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs, createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

let entered: () => void = () => undefined;
let openGate: () => void = () => undefined;
let gate = Promise.resolve();
let lostIt: (reason: string) => void = () => undefined;

@Controller('rv')
class LosingController {
  constructor(private readonly locks: LockService) {}

  @Get('lost')
  @Locked('rv:lost', { ttl: 8_000 })
  async lost(): Promise<string> {
    const lock = this.locks.current()!;
    entered();
    // The lock is taken away in Redis meanwhile (the spec deletes it); the next renewal
    // (extend() here, the watchdog's later) is refused and the lock is lost.
    await gate;
    await lock.extend().catch((error: Error & { reason?: string }) => lostIt(error.reason ?? error.message));
    await gate2;
    return 'done';
  }
}
let gate2 = Promise.resolve();
let openGate2: () => void = () => undefined;

describe('a lost lock whose release is in flight when the application closes on a frozen Redis', () => {
  const own = useOwnRedis();
  let client: Redis | undefined;
  let app: LockApp | undefined;
  const opened: INestApplication[] = [];
  afterEach(async () => {
    own.server().resume();
    await app?.close().catch(() => undefined);
    await Promise.all(opened.splice(0).map((nest) => nest.close().catch(() => undefined)));
    client?.disconnect();
    app = client = undefined;
  });

  it("(handed-in client) the holder's release() ends with the shutdown", { timeout: 20_000 }, async () => {
    client = new Redis(own.url());
    client.on('error', () => undefined);
    await client.ping();
    app = await createLockApp({ redis: client, ttl: '30s', shutdownTimeout: '500ms' });
    const lock = await app.locks.acquire('rv:handed');
    await own.redis().del('lock:{rv:handed}');
    const extended = await lock.extend().then(
      () => 'extended',
      (error: Error & { reason?: string }) => `${error.name} ${error.reason}`,
    );
    expect(extended).toBe('LockLostError refused');
    own.server().pause();
    const release: { settled?: string } = {};
    lock.release().then(
      () => (release.settled = 'resolved'),
      (error: Error) => (release.settled = `${error.name}: ${error.message}`),
    );
    await app.close();
    await sleep(200);
    expect(release.settled ?? 'still pending after app.close()').not.toBe('still pending after app.close()');
  });

  it('(own connection) app.close() ends within shutdownTimeout while a @Locked route waits on a lost lock\'s release', { timeout: 30_000 }, async () => {
    gate = new Promise<void>((resolve) => (openGate = resolve));
    gate2 = new Promise<void>((resolve) => (openGate2 = resolve));
    const lost = new Promise<string>((resolve) => (lostIt = resolve));
    const nest = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: own.url(), shutdownTimeout: '1s' })],
      controllers: [LosingController],
    }, { logger: new CapturedLogs() });
    opened.push(nest);
    const url = `${await listenOnLoopback(nest)}/rv/lost`;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const request = fetch(url).then(
      (res) => res.status,
      (error: Error) => error.message,
    );
    await inside;
    await own.redis().del('lock:{rv:lost}');
    openGate();
    expect(await lost).toBe('refused');
    own.server().pause();
    // The method returns: @Locked releases the lost lock (sent to the frozen Redis).
    openGate2();
    await sleep(100);
    const startedAt = performance.now();
    const closed: { after?: number } = {};
    void nest.close().then(() => (closed.after = Math.round(performance.now() - startedAt)));
    // shutdownTimeout is 1 s; the lock's ttl 8 s.
    await expect.poll(() => closed.after ?? 'app.close() still pending', { timeout: Number(process.env.REVIEW_WAIT ?? 4_000), interval: 100 }).toBeTypeOf('number');
    if (process.env.REVIEW_WAIT) console.log('closed after', closed.after);
    expect(closed.after).toBeLessThan(4_000);
    expect(await request).toBeTypeOf('number');
  });
});
