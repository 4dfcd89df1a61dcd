/**
 * Found by review (thirty-fourth session): behind a reverse proxy that rewrites `Host` to its
 * upstream's name (nginx's default for `proxy_pass`, `$proxy_host`; Apache without
 * `ProxyPreserveHost`), a board with `allowedHosts` sees that name on every request and refuses
 * the page its operators open: `Refused: the lock board is not served under this host (Host:
 * "127.0.0.1:<port>"); see its "allowedHosts" option.` The fix that message suggests, listing the
 * upstream name, lets every request through the proxy in, a rebound page's included (the proxy
 * rewrites its Host the same way), which is the one thing `allowedHosts` is there to stop; the
 * docs said nothing of proxies there. The refusal names the proxy setting now (and the
 * `X-Forwarded-Host` the request came for, which it never trusts), and the docs say it.
 */
import { request as httpRequest, createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath } from '../../scripts/chromium.mjs';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/** The name the operators open the board under (Chromium resolves it to 127.0.0.1). */
const BOARD_HOST = 'admin.example.test';

/**
 * A reverse proxy in front of `upstream` (`http://127.0.0.1:<port>`): as nginx's `proxy_pass`
 * does by default, it sends the upstream's own name as Host (`rewriteHost`), or passes the
 * browser's on (`proxy_set_header Host $host`); either way with `X-Forwarded-Host`.
 */
async function startProxy(upstream: string, rewriteHost: boolean): Promise<{ port: number; close: () => Promise<void> }> {
  const target = new URL(upstream);
  const server: Server = createServer((incoming, outgoing) => {
    const headers: IncomingHttpHeaders = { ...incoming.headers, 'x-forwarded-host': incoming.headers.host, 'x-forwarded-proto': 'http' };
    if (rewriteHost) headers.host = target.host;
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers }, (reply) => {
      outgoing.writeHead(reply.statusCode!, reply.headers);
      reply.pipe(outgoing);
    });
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a lock board with allowedHosts behind a reverse proxy, in headless Chromium', () => {
  useRedis();
  let browser: Browser;
  let app: INestApplication | undefined;
  const proxies: { close: () => Promise<void> }[] = [];
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: ['--no-sandbox', `--host-resolver-rules=MAP ${BOARD_HOST} 127.0.0.1, MAP rebound.example.test 127.0.0.1`],
      timeout: 60_000,
    });
  }, 60_000);
  afterAll(() => browser?.close());
  const contexts: BrowserContext[] = [];
  afterEach(async () => {
    // The pages first: an open board polls its API and holds its event stream, which the close
    // of the proxy and of the application would otherwise cut in the middle of a request.
    await Promise.all(contexts.splice(0).map((context) => context.close()));
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
    await app?.close();
    app = undefined;
  });

  let appUrl: URL;
  /** The board (open guard, `allowedHosts: [BOARD_HOST]`) behind a proxy; the proxy's port. */
  async function start(rewriteHost: boolean): Promise<number> {
    app = await createHttpApp({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
        RedisLockBoardModule.register({ path: 'admin/locks', guards: [{ canActivate: () => true }], allowedHosts: [BOARD_HOST] }),
      ],
    });
    appUrl = new URL(await listenOnLoopback(app));
    const proxy = await startProxy(appUrl.origin, rewriteHost);
    proxies.push(proxy);
    return proxy.port;
  }

  /** What the browser shows for `host`'s board page through the proxy: its status and text. */
  async function open(host: string, port: number): Promise<{ status: number; text: string; rows: () => Promise<string> }> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    const response = await page.goto(`http://${host}:${port}/admin/locks`);
    return { status: response!.status(), text: await response!.text(), rows: async () => (await page.locator('#locks tbody').textContent()) ?? '' };
  }

  it('refuses behind a proxy that rewrites Host with a message that names the proxy setting, not the upstream name', async () => {
    const port = await start(true);
    const { status, text } = await open(BOARD_HOST, port);
    expect(status).toBe(403);
    const { message } = JSON.parse(text) as { message: string };
    expect(message).toContain('(Host: "127.0.0.1:');
    // Where the request was meant to go, and what to set on the proxy.
    expect(message).toContain(`X-Forwarded-Host: "${BOARD_HOST}:${port}"`);
    expect(message).toContain('proxy_set_header Host $host');
    expect(message).toContain('instead of listing the upstream name');
    expect(message).toContain('"allowedHosts"');
  });

  it('serves the page through a proxy that passes Host on, and still refuses a rebound name', async () => {
    const port = await start(false);
    const held = await app!.get(LockService).acquire('invoice:2026-12', { label: 'InvoicesService.close' });
    const board = await open(BOARD_HOST, port);
    expect(board.status).toBe(200);
    await expect.poll(board.rows, { timeout: 10_000 }).toContain('invoice:2026-12');
    const rebound = await open('rebound.example.test', port);
    expect(rebound.status).toBe(403);
    expect(rebound.text).not.toContain('invoice:2026-12');
    // A page under the rebound name (its fetch() is same-origin there) sets X-Forwarded-Host as it likes: never trusted.
    const forged = await new Promise<number>((resolve, reject) => {
      const headers = { host: `rebound.example.test:${appUrl.port}`, 'x-forwarded-host': BOARD_HOST };
      httpRequest({ host: '127.0.0.1', port: appUrl.port, path: '/admin/locks/api/locks', headers }, (reply) => {
        reply.resume();
        resolve(reply.statusCode!);
      })
        .on('error', reject)
        .end();
    });
    expect(forged).toBe(403);
    await held.release();
  });
});
