/**
 * Review (HTTP answers): a `LockLostError` with reason `expired` from a lock taken with
 * `autoRenew: false` (its work outlived the ttl its code chose; nothing renews it but `extend()`)
 * that reached a route was answered as a renewed lock's lease run out is: 503 with
 * `Retry-After: 1`, "the lock service is unavailable. Try again later.", and no error log of
 * Nest's. Nothing was unavailable: Redis answered every call, and a retry runs the same work under
 * the same ttl, to run out again. It is the application's to fix, so it is left a 500 that Nest
 * logs, the message saying what to change (a longer ttl, `extend()` while it works, or the
 * watchdog), as a renewal refused for good is; the client's answer names no key. A renewed lock
 * whose lease ran out (Redis out of reach, the event loop blocked) keeps its 503.
 */
import { Controller, Get, Query, type INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** A key a request made: a forged log line, and long. */
const HOSTILE = `k\n[WARN] forged ${'x'.repeat(500)}`;

@Controller('work')
class WorkController {
  constructor(private readonly locks: LockService) {}

  /** Work that outlives the ttl it chose, its lock not renewed. */
  @Get('unrenewed')
  async unrenewed(@Query('key') key: string): Promise<string> {
    // Waits rather than `waitTimeout: 0`: on a loaded machine a grant whose reply came after its
    // 200 ms lease is given back (a 503 for a Redis too slow), and the wait's next attempt has it.
    return this.locks.using(key, async (lock) => {
      await aborted(lock.signal);
      lock.signal.throwIfAborted();
      return 'done';
    }, { ttl: 200, autoRenew: false, waitTimeout: 30_000 });
  }
}

describe('LockConflictInterceptor and a lock taken with autoRenew: false whose ttl ran out under the work', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('answers 500 without the key, and Nest logs the error saying what to change', async () => {
    const logs = new CapturedLogs();
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], controllers: [WorkController] }, { logs, logger: logs });
    const url = `${await listenOnLoopback(app)}/work`;
    const response = await fetch(`${url}/unrenewed?key=${encodeURIComponent(HOSTILE)}`);
    const body = (await response.json()) as { message: string };
    expect(response.status).toBe(500);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(body.message).not.toContain('forged');
    // Nest's own log of the route's error (not the library's 'lock lost: ...' line), naming the remedy.
    const nests = logs.lines.filter((line) => line.level === 'error' && !line.message.startsWith('lock lost: '));
    expect(nests.some((line) => /autoRenew: false/.test(line.message) && /raise its ttl/.test(line.message))).toBe(true);
    // The key escaped and cut in that log line: no forged line of its own.
    for (const line of nests) expect(line.message).not.toContain('\n[WARN] forged');
  });
});
