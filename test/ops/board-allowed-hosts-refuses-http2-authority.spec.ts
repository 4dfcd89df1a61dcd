import { connect, constants } from 'node:http2';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// Over HTTP/2 a client names the host in the `:authority` pseudo-header and sends no `Host`
// (RFC 9113 8.3.1; browsers never send Host over h2). BoardHostGuard reads only
// `headers.host`, so a board with `allowedHosts` served by Fastify over HTTP/2 refuses every
// request for its own, allowed host name with 403.
function get(origin: string, path: string, authority: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.on('error', reject);
    const stream = session.request({ [constants.HTTP2_HEADER_PATH]: path, [constants.HTTP2_HEADER_METHOD]: 'GET', [constants.HTTP2_HEADER_AUTHORITY]: authority });
    let status = 0;
    let body = '';
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => {
      session.close();
      resolve({ status, body });
    });
    stream.on('error', reject);
    stream.end();
  });
}

describe('lock board allowedHosts over HTTP/2 (Fastify)', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('answers a request whose :authority is an allowed host', async () => {
    const logs = new CapturedLogs();
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowWithoutGuards: true, allowedHosts: ['localhost'] })],
    }, { adapter: new FastifyAdapter({ http2: true } as never), logs, logger: logs });
    const port = new URL(await listenOnLoopback(app)).port;
    const origin = `http://127.0.0.1:${port}`;
    // The board is up over HTTP/2: a path it does not serve answers 404, not a refusal.
    expect((await get(origin, '/nothing-here', `localhost:${port}`)).status).toBe(404);
    const page = await get(origin, '/locks/api/locks', `localhost:${port}`);
    expect(page.body).not.toContain('allowedHosts');
    expect(page.status).toBe(200);
  });
});
