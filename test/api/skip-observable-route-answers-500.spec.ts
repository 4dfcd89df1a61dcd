/**
 * Defect: a `@Locked(..., { onBusy: 'skip' })` route declared to return an Observable answers
 * 500 Internal Server Error, with an ERROR log line ("EmptyError: no elements in sequence") for
 * every request, whenever the lock is held elsewhere; the same route returning a Promise answers
 * 200 (empty body). The skip makes the Observable complete empty, and Nest's router takes the
 * last value of a handler's Observable (`lastValueFrom`), which fails on an empty one; the global
 * `LockConflictInterceptor`, which exists so that a busy lock is not "a 500 and an error log for
 * every such request a client sends", lets it through.
 *
 * Promise: docs/locks.md "`'skip'` does not run the method and resolves `undefined` (an
 * Observable completes empty)"; "Busy over HTTP. ... not a 500 and an error log for every such
 * request a client sends". One option, two answers over HTTP depending on the return type.
 *
 * Code at fault: lib/core/engine/locked-call.ts `runLockedObservable` (`subscriber.complete()` on a
 * skip) and lib/lock-conflict.interceptor.ts (maps errors only).
 */
import { Controller, Get, Module, Param, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Observable, of } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockModule } from '../../lib/index.js';
import { listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Controller('reports')
class ReportsController {
  @Get('stream/:id')
  @Locked('report:<0>', { onBusy: 'skip', waitTimeout: 0 })
  stream(@Param('id') id: string): Observable<{ id: string }> {
    return of({ id });
  }

  @Get('promise/:id')
  @Locked('report:<0>', { onBusy: 'skip', waitTimeout: 0 })
  async promise(@Param('id') id: string): Promise<{ id: string }> {
    return { id };
  }
}

describe('a skipped @Locked route', () => {
  useRedis();
  let app: INestApplication;
  let base: string;
  const logs = new CapturedLogs();
  beforeAll(async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], controllers: [ReportsController] })
    class AppModule {}
    app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: logs, forceCloseConnections: true });
    base = await listenOnLoopback(app);
  });
  afterAll(() => app?.close());

  it('answers the same whether the handler returns an Observable or a Promise', async () => {
    const lock = await app.get(LockService).acquire('report:1');
    try {
      const promise = await fetch(`${base}/reports/promise/1`);
      const stream = await fetch(`${base}/reports/stream/1`);
      expect(promise.status).toBe(200);
      // Fails: 500, and the ERROR log below holds "EmptyError: no elements in sequence".
      expect({ status: stream.status, errors: logs.lines.filter((line) => line.level === 'error').length }).toEqual({ status: promise.status, errors: 0 });
    } finally {
      await lock.release();
    }
  });
});
