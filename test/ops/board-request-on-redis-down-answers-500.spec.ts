/**
 * Review (HTTP answers): the lock board answered a list or a release by force 503 when Redis did
 * not answer within its bound (board-request-hangs-while-redis-frozen.spec.ts), but 500, with a
 * Nest ERROR log per poll of an open tab, when Redis could not be asked at all for now: its
 * server down and the client failing fast (ioredis `enableOfflineQueue: false`), where the lock
 * calls a route awaits answer 503 (`RedisUnavailableError`). The board answers both 503 too.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { INestApplication } from '@nestjs/common';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const requests: [string, (url: string) => Promise<Response>][] = [
  ['the lock list', (url) => fetch(`${url}/api/locks`, { headers: { 'x-admin': 'yes' } })],
  [
    'a release by force',
    (url) =>
      fetch(`${url}/api/locks/release`, {
        method: 'POST',
        headers: { 'x-admin': 'yes', 'content-type': 'application/json', 'x-lock-board': '1' },
        body: JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId('someone-else') }),
      }),
  ],
];

describe('a board request while Redis is down and the client fails fast', () => {
  let app: INestApplication | undefined;
  let server: RedisServer | undefined;
  let client: Redis | undefined;
  afterEach(async () => {
    await app?.close();
    client?.disconnect();
    await server?.stop();
  });

  it('the lock list and a release by force each answer 503, logging no error', { timeout: 30_000 }, async () => {
    server = await startRedisServer();
    client = new Redis(server.url, { enableOfflineQueue: false, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    // Connected before the first requests: without an offline queue, a command sent while it still
    // connects is refused unsent (a 503, rightly, under load).
    if (client.status !== 'ready') await new Promise((resolve) => client!.once('ready', resolve));
    const logs = new CapturedLogs();
    app = await createHttpApp(
      { imports: [RedisLockModule.forRoot({ redis: client, isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminHeaderGuard], allowForceRelease: true })] },
      { logs, logger: logs },
    );
    const url = `${await listenOnLoopback(app)}/locks`;
    for (const [, send] of requests) expect((await send(url)).status).toBeLessThan(500);
    await server.stop();
    // The client has seen its connection close (not a command on its way as it closed).
    await expect.poll(() => client!.status, { timeout: 10_000 }).not.toBe('ready');
    for (const [what, send] of requests) {
      const response = await send(url);
      expect(`${what}: ${response.status}`).toBe(`${what}: 503`);
    }
    expect(logs.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});
