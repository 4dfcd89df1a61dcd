// docs/locks.md, "Busy over HTTP": the interceptor turns a LockNotAcquiredError reaching a route
// into 409, "503 Service Unavailable when Redis did not answer, or when the application closed
// while the request waited", "not a 500 and an error log". CHANGELOG (14b76a2): a waiting
// request got "a 500 and an error log at every rolling deploy"; the fix covers waits only.
//
// What happens: Nest's app.close() runs the beforeApplicationShutdown() hooks, module by module,
// before it disposes the HTTP server: LockService's (which closes the engine and gives back the
// locks, up to shutdownTimeout) and then the application's own (draining a queue, say), so the
// server keeps answering new requests while the engine is closed. A request that reaches a @Locked route in that window is refused by
// LockManager.assertOpen() with a plain RedisLockError ("LockService is shut down ..."): the
// interceptor passes it through, and Nest answers 500 and logs an error, exactly the rolling
// deploy symptom the fix meant to remove.
import 'reflect-metadata';
import { Controller, Get, Injectable, Module, type INestApplication, type BeforeApplicationShutdown } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

let openGate: () => void = () => undefined;
let shutdownReached: () => void = () => undefined;

/** An application's own shutdown work (closing its clients, say), which takes a while. */
@Injectable()
class SlowShutdown implements BeforeApplicationShutdown {
  async beforeApplicationShutdown(): Promise<void> {
    shutdownReached();
    await new Promise<void>((resolve) => (openGate = resolve));
  }
}

/** The module that does it, imported by a feature module (Nest runs the hooks root first, outwards). */
@Module({ providers: [SlowShutdown] })
class DrainModule {}

@Module({ imports: [DrainModule] })
class FeatureModule {}

@Controller('s15g')
class AccountsController {
  @Get('single')
  @Locked('s15g-acct:close', { waitTimeout: 5_000 })
  async single(): Promise<string> {
    return 'done';
  }

  @Get('multi')
  @Locked(['s15g-acct:x', 's15g-acct:y'], { waitTimeout: 5_000 })
  async multi(): Promise<string> {
    return 'done';
  }
}

describe('a @Locked route called while app.close() runs (HTTP server still answering)', () => {
  useRedis();
  const opened: INestApplication[] = [];
  afterEach(async () => {
    openGate();
    await Promise.all(opened.splice(0).map((app) => app.close().catch(() => undefined)));
  });

  it.each(['single', 'multi'])('%s-key route: answered 503, not 500 and an error log', { timeout: 30_000 }, async (route) => {
    const logs = new CapturedLogs();
    const app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl() }), FeatureModule],
      controllers: [AccountsController],
    }, { logger: logs });
    const url = `${await listenOnLoopback(app)}/s15g/${route}`;
    // Sanity: the route works before close.
    expect((await fetch(url)).status).toBe(200);

    const reached = new Promise<void>((resolve) => (shutdownReached = resolve));
    const closing = app.close();
    await reached; // the HTTP server is not disposed yet
    // LockService's engine is closed by now: a call is refused at once.
    await expect(app.get(LockService).tryAcquire('s15g-probe')).rejects.toThrow(/LockService is shut down/);
    const res = await fetch(url);
    const answer = { status: res.status, body: await res.text() };
    openGate();
    await closing;
    const errorLogs = logs.lines.filter((line) => line.level === 'error').map((line) => String(line.message));
    expect({ status: answer.status, errorLogs }).toEqual({ status: 503, errorLogs: [] });
  });
});
