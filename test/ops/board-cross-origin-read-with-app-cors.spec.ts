/**
 * Found by review: the board's read routes (the lock list and the live feed) answer a cross-site
 * page whenever the application enables CORS for its own API (`app.enableCors()`), which is
 * common. The board adds no check of its own on GET: `crossSiteRefusal` (lock-board.requests.ts)
 * runs for the release only, and nothing on the board's routes overrides or refuses the
 * application's `Access-Control-Allow-Origin`.
 *
 * - `app.enableCors()` (origin `*`): a page on any site that an intranet user visits reads the
 *   list of a board "protected by a private network" (`allowWithoutGuards: true`, the docs' own
 *   case), even with `allowedHosts` set: the browser's request carries the board's real Host.
 * - `app.enableCors({ origin: true, credentials: true })`: a page on any site reads a guarded
 *   board with the admin's session cookie.
 *
 * docs/observability.md says the board "answers no CORS preflight" and that a cross-site page
 * cannot act on it; what it shows (keys, labels, hosts, pids) is the sensitive part.
 */
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule, type LockBoardOptions } from '../../lib/board/index.js';
import { AdminCookieGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/** What a browser sends with `fetch(boardUrl, { credentials: 'include' })` from https://evil.example. */
const CROSS_SITE = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' };

/** Whether the browser would hand the response to the page at https://evil.example. */
function readableBy(response: Response, origin: string, credentials: boolean): boolean {
  const allowed = response.headers.get('access-control-allow-origin');
  if (allowed === null) return false;
  if (credentials) return allowed === origin && response.headers.get('access-control-allow-credentials') === 'true';
  return allowed === '*' || allowed === origin;
}

describe.each([
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const)('board read routes and the application CORS on %s', (_name, adapter) => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(board: LockBoardOptions, cors: Parameters<INestApplication['enableCors']>[0]): Promise<string> {
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register(board)] }, { adapter: adapter() });
    app.enableCors(cors);
    const url = await listenOnLoopback(app);
    await app.get(LockService).acquire('payroll:customer-42', { label: 'PayrollJob.run' });
    return `${url}/locks`;
  }

  it('a private-network board (allowWithoutGuards, allowedHosts) is not readable by another site through app.enableCors()', async () => {
    const url = await start({ allowWithoutGuards: true, allowedHosts: ['127.0.0.1'] }, undefined);
    const response = await fetch(`${url}/api/locks`, { headers: CROSS_SITE });
    const leaked = response.status === 200 && readableBy(response, CROSS_SITE.origin, false) && (await response.text()).includes('payroll:customer-42');
    expect(leaked).toBe(false);
  });

  it('a guarded board is not readable with the admin cookie by another site through a reflecting CORS config', async () => {
    const url = await start({ guards: [AdminCookieGuard] }, { origin: true, credentials: true });
    const response = await fetch(`${url}/api/locks`, { headers: { ...CROSS_SITE, cookie: 'session=admin' } });
    const leaked = response.status === 200 && readableBy(response, CROSS_SITE.origin, true) && (await response.text()).includes('PayrollJob.run');
    expect(leaked).toBe(false);
  });
});
