/**
 * Found by review: once its application is closing, the board answers each request with
 * `Connection: close` (so that an open page's polls do not keep an HTTP/1.1 connection, and the
 * server, open). HTTP/2 has no such header: Node dropped it and printed an `UnsupportedWarning`
 * for every board request answered during a close over HTTP/2 (Fastify `http2: true`).
 */
import { connect, constants } from 'node:http2';
import type { CanActivate, ExecutionContext, INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('a board request answered during the close, over HTTP/2 (Fastify)', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('is answered 503 without a process warning about a Connection header', async () => {
    let reached!: () => void;
    const inGuard = new Promise<void>((resolve) => (reached = resolve));
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    // The application's guard: holds the board's list until the application is closing.
    const holding: CanActivate = {
      async canActivate(_context: ExecutionContext) {
        reached();
        await held;
        return true;
      },
    };
    app = await createHttpApp(
      { imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ guards: [holding], allowedHosts: ['127.0.0.1'] })] },
      { adapter: new FastifyAdapter({ http2: true } as never) },
    );
    const origin = new URL(await listenOnLoopback(app)).origin;
    const server = app.getHttpServer() as { listening: boolean };
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const session = connect(origin);
      session.on('error', () => undefined);
      const stream = session.request({ [constants.HTTP2_HEADER_PATH]: '/locks/api/locks', [constants.HTTP2_HEADER_AUTHORITY]: new URL(origin).host });
      const status = new Promise<number>((resolve) => stream.on('response', (headers) => resolve(Number(headers[':status']))));
      stream.resume();
      stream.end();
      await inGuard;
      const closing = app.close();
      app = undefined;
      // The board's shutdown hook has run once Nest closes the HTTP server.
      await expect.poll(() => server.listening).toBe(false);
      letGo();
      expect(await status).toBe(503);
      session.close();
      await closing;
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => /connection/i.test(warning))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
