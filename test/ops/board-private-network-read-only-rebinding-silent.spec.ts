/**
 * Review finding (hardening): a read-only board that relies on a private network
 * (`allowWithoutGuards: true`, the documented way to say so) and has no `allowedHosts` answers a
 * page of another site that reached it by DNS rebinding, and the application is never told.
 * docs/observability.md: "a private network alone does not protect a board, neither what it shows
 * nor a release by force". The startup warning about rebinding (lock-board.module-definition.ts:
 * 44-49) is given only when `allowForceRelease` is set; `allowWithoutGuards` silences the other
 * one (lines 38-43). So the configuration the docs describe for a private-network board leaks the
 * keys, labels, hosts and pids to any web page an intranet user opens, silently.
 */
import { request } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/** A GET as a rebound page sends it: its own host name in `Host`, and its own, matching, `Origin`. */
function rebound(url: string, host: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, headers: { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('read-only board behind a private network, without allowedHosts', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('warns at startup that a rebound page can read it (or refuses the foreign host)', async () => {
    const logs = new CapturedLogs();
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowWithoutGuards: true })],
    }, { logs, logger: logs });
    const url = `${await listenOnLoopback(app)}/locks/api/locks`;
    await app.get(LockService).acquire('hr:salary-review:emp-1234', { label: 'SalaryReview.run' });
    const answer = await rebound(url, `attacker.example:${new URL(url).port}`);
    const readByRebinding = answer.status === 200 && answer.body.includes('hr:salary-review:emp-1234');
    const warned = logs.lines.some((line) => line.level === 'warn' && line.message.includes('allowedHosts'));
    // Either the board refuses the foreign host, or the operator was told to set allowedHosts.
    expect({ readByRebinding, warned }).not.toEqual({ readByRebinding: true, warned: false });
  });
});
