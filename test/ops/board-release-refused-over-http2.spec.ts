/**
 * Found by review: over HTTP/2 the board's own "Release by force" request is refused with 403.
 * A browser names the host in `:authority` and sends no `Host` over h2, but always sends `Origin`
 * with a POST `fetch()`. `crossSiteRefusal` (lock-board.requests.ts:37-43, sameOrigin at 47-49) compares `Origin` with
 * `headers.host` only and answers 403 "no Host to compare with" when it is missing; the host
 * guard was taught `:authority` (lock-board.controller.ts:179), the release check was not. A
 * board served over HTTP/2 (Fastify `http2: true`) can never release a lock from its page.
 */
import { connect, constants } from 'node:http2';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/** A request as Chromium sends the board's release over h2: `:authority`, `Origin`, no `Host`. */
function post(origin: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.on('error', reject);
    const stream = session.request({ [constants.HTTP2_HEADER_PATH]: path, [constants.HTTP2_HEADER_METHOD]: 'POST', ...headers });
    let status = 0;
    let text = '';
    stream.on('response', (answer) => (status = Number(answer[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => {
      session.close();
      resolve({ status, body: text });
    });
    stream.on('error', reject);
    stream.end(body);
  });
}

describe('lock board release over HTTP/2 (Fastify)', () => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("accepts the board's own same-origin release", async () => {
    const logs = new CapturedLogs();
    app = await createHttpApp({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
        RedisLockBoardModule.register({ allowForceRelease: true, allowWithoutGuards: true, allowedHosts: ['127.0.0.1'] }),
      ],
    }, { adapter: new FastifyAdapter({ http2: true } as never), logs, logger: logs });
    const port = new URL(await listenOnLoopback(app)).port;
    const origin = `http://127.0.0.1:${port}`;
    await app.get(LockService).acquire('stuck');
    const answer = await post(
      origin,
      '/locks/api/locks/release',
      {
        [constants.HTTP2_HEADER_AUTHORITY]: `127.0.0.1:${port}`,
        origin,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/json',
        'x-lock-board': '1',
      },
      JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId((await redis.get('lock:{stuck}'))!) }),
    );
    expect(answer).toEqual({ status: 200, body: JSON.stringify({ released: true }) });
    expect(await redis.exists('lock:{stuck}')).toBe(0);
  });
});
