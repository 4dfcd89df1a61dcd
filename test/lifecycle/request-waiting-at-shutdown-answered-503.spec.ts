// docs/lock-family.md, "Several keys at once": a key lost while the call waits for a later one
// makes the call reject "with LockNotAcquiredError naming that key: ... with the loss as its
// `cause` when its lease ran out unrenewed or the application shut down (HTTP 503)".
// docs/locks.md, "Busy over HTTP": the module's interceptor turns a LockNotAcquiredError reaching
// a route into 409 (503 when Redis did not answer), "not a 500 and an error log for every such
// request"; `acquire()` "waits up to waitTimeout, then rejects with LockNotAcquiredError", and
// "shutdown end[s] a wait cleanly".
//
// What happens: app.close() while a request waits for a @Locked route's lock (a graceful
// shutdown in a rolling deploy, with the HTTP server still answering until Nest disposes it).
// LockService aborts every wait with a plain RedisLockError("LockService shut down (the
// application is closing) while waiting for a lock.", lib/core/engine/lock-manager.ts:580): no
// LockNotAcquiredError, no key, no cause. The interceptor passes it through, and Nest answers
// 500 Internal Server Error and logs it as an unhandled error, for the multi-key route whose first
// key was held (and is given back at shutdown) exactly as for a single key. Clients and load
// balancers that retry a 503 treat the 500 as a server bug, and every deploy logs one error per
// waiting request.
import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule, type Lock } from '../../lib/index.js';
import { createHttpApp } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Controller('s15c')
class TransfersController {
  @Get('single')
  @Locked('s15c-acct:b', { waitTimeout: 20_000 })
  async single(): Promise<string> {
    return 'done';
  }

  @Get('multi')
  @Locked(['s15c-acct:a', 's15c-acct:b'], { waitTimeout: 20_000 })
  async multi(): Promise<string> {
    return 'done';
  }
}

async function startApp(logs?: CapturedLogs): Promise<INestApplication> {
  const app = await createHttpApp({
    imports: [RedisLockModule.forRoot({ redis: redisUrl() })],
    controllers: [TransfersController],
  }, { logger: logs ?? false });
  await app.listen(0, '127.0.0.1');
  return app;
}

describe('an HTTP request waiting for a @Locked route when the application shuts down', () => {
  useRedis();
  const opened: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close().catch(() => undefined)));
  });

  it.each(['multi', 'single'])('%s-key route: answered 503 (LockNotAcquiredError), not 500', { timeout: 30_000 }, async (route) => {
    // Another instance holds the second key for the whole test.
    const other = await startApp();
    opened.push(other);
    const held: Lock = await other.get(LockService).acquire('s15c-acct:b');

    const logs = new CapturedLogs();
    const app = await startApp(logs);
    const url = `${await app.getUrl()}/s15c/${route}`.replace('[::1]', '127.0.0.1');
    const response = fetch(url).then(async (res) => ({ status: res.status, body: await res.text() }));
    // The request is waiting: the route's lock of 's15c-acct:b' has a waiter in Redis' queue.
    const redis = other.get(LockService);
    for (let i = 0; i < 100 && (await redis.inspect('s15c-acct:b')).waiters === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await redis.inspect('s15c-acct:b')).waiters).toBe(1);

    await app.close();
    const answer = await response;
    const errorLogs = logs.lines.filter((line) => line.level === 'error').map((line) => line.message);
    expect({ status: answer.status, errorLogs }).toEqual({ status: 503, errorLogs: [] });
    await held.release();
  });
});
