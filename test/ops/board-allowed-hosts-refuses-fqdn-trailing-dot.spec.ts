import { request } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { hostNameOf } from '../../lib/board/lock-board.hosts.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// A fully qualified name with its trailing dot ("board.internal.") is the same host as
// "board.internal": a browser opened on http://board.internal.:port/ sends `Host: board.internal.:port`.
// hostNameOf (lib/board/lock-board.hosts.ts) kept the dot (WHATWG URL does), so the allowed
// name did not match and the board refused its own host with 403.
function status(url: string, host: string): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('lock board allowedHosts and a Host with the trailing dot of a fully qualified name', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('answers board.internal. for allowedHosts ["board.internal"]', async () => {
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowWithoutGuards: true, allowedHosts: ['board.internal'] })],
    }, { adapter: new ExpressAdapter(), logger: new CapturedLogs() });
    const url = `${await listenOnLoopback(app)}/locks`;
    const port = new URL(url).port;
    expect(await status(url, `board.internal:${port}`)).toBe(200);
    expect(hostNameOf(`board.internal.:${port}`)).toBe('board.internal');
    // One dot only: `board.internal..` is no host name.
    expect(await status(url, `board.internal..:${port}`)).toBe(403);
    expect(await status(url, `board.internal.:${port}`)).toBe(200);
  });
});
