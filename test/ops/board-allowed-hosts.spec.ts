import { request } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule, type LockBoardOptions } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * DNS rebinding: a page of another site whose name the attacker points at the board's address
 * sends requests whose `Host` and `Origin` both carry the attacker's name, so they pass the
 * board's cross-site checks. `allowedHosts` refuses every request for a name the board is not
 * served under, on every route, before any guard.
 */
type Reply = { status: number; body: string; contentType: string | undefined };

/** One request with a Host header of our choosing (fetch() does not let a caller set Host). */
function send(url: string, host: string, init: { method?: string; headers?: Record<string, string>; body?: string; stream?: boolean } = {}): Promise<Reply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: init.method ?? 'GET', headers: { ...init.headers, host } },
      (res) => {
        const contentType = res.headers['content-type'];
        if (init.stream && res.statusCode === 200) {
          // A live feed never ends on its own: its status and type are what we need.
          res.destroy();
          resolve({ status: 200, body: '', contentType });
          return;
        }
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body, contentType }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

const RELEASE_HEADERS = { 'content-type': 'application/json', 'x-lock-board': '1' };

const adapters = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const;

describe.each(adapters)('lock board allowedHosts on %s', (_platform, adapter) => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  let logs: CapturedLogs;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(board: LockBoardOptions): Promise<{ url: string; port: string }> {
    logs = new CapturedLogs();
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register(board)] }, { adapter: adapter(), logs, logger: logs });
    const url = `${await listenOnLoopback(app)}/locks`;
    return { url, port: new URL(url).port };
  }

  it('answers its own host on every route, and refuses a rebound host on every route, the release included', async () => {
    const { url, port } = await start({ allowForceRelease: true, allowWithoutGuards: true, allowedHosts: ['board.internal'] });
    const lock = await app!.get(LockService).acquire('payments', { label: 'PaymentsJob.run' });
    const own = `board.internal:${port}`;
    const rebound = `evil.example:${port}`;
    const release = { method: 'POST', headers: { ...RELEASE_HEADERS, origin: `http://${rebound}` }, body: JSON.stringify({ key: 'payments', confirm: 'payments' }) };
    for (const [path, init] of [
      ['', {}],
      ['/board.js', {}],
      ['/board.css', {}],
      ['/api/locks', {}],
      ['/api/events', { stream: true }],
      ['/api/locks/release', release],
    ] as const) {
      const refused = await send(`${url}${path}`, rebound, init);
      expect(refused.status, `${path || '/'} for ${rebound}`).toBe(403);
      expect(refused.body).toContain('allowedHosts');
      expect(refused.body).not.toContain('payments');
    }
    expect(await redis.exists('lock:{payments}')).toBe(1);
    // The board's own host name, with any port, in any case.
    expect((await send(url, own)).status).toBe(200);
    expect((await send(url, `BOARD.internal:${port}`)).status).toBe(200);
    expect((await send(`${url}/board.js`, own)).contentType).toMatch(/^text\/javascript/);
    expect((await send(`${url}/api/events`, own, { stream: true })).contentType).toMatch(/^text\/event-stream/);
    const listed = await send(`${url}/api/locks`, own);
    expect(JSON.parse(listed.body).locks.map((entry: { key: string }) => entry.key)).toEqual(['payments']);
    const { holderId } = JSON.parse(listed.body).locks[0] as { holderId: string };
    const body = JSON.stringify({ key: 'payments', confirm: 'payments', holder: holderId });
    const released = await send(`${url}/api/locks/release`, own, { ...release, body, headers: { ...RELEASE_HEADERS, origin: `http://${own}` } });
    expect(JSON.parse(released.body)).toEqual({ released: true });
    await expect(lock.extend()).rejects.toThrow();
    expect(logs.lines.filter((line) => line.level === 'warn')).toEqual([]);
  });

  it('matches a domain and its subdomains for a leading dot, and nothing that only ends alike', async () => {
    const { url, port } = await start({ allowedHosts: ['.example.com', '[::1]', 'localhost'], guards: [{ canActivate: () => true }] });
    for (const host of ['example.com', 'admin.example.com', `a.b.example.com:${port}`, `[::1]:${port}`, 'localhost']) expect((await send(url, host)).status, host).toBe(200);
    for (const host of ['badexample.com', 'example.com.evil.net', `127.0.0.1:${port}`, '[::2]', 'localhost.evil.net']) expect((await send(url, host)).status, host).toBe(403);
  });

  it('shows a hostile Host header bounded and as JSON text, never as markup', async () => {
    const { url } = await start({ allowedHosts: ['board.internal'], allowWithoutGuards: true });
    const hostile = `<script>alert(1)</script>${'x'.repeat(200)}.example`;
    const refused = await send(url, hostile);
    // Node's HTTP parser may refuse the header itself; when it reaches the board, the answer is JSON.
    if (refused.status === 403) {
      expect(refused.contentType).toMatch(/^application\/json/);
      expect(refused.body.length).toBeLessThan(400);
      expect(refused.body).not.toContain('x'.repeat(100));
    } else {
      expect(refused.status).toBe(400);
    }
  });
});

describe('lock board allowedHosts options', () => {
  useRedis();

  it.each([
    [[], 'allowedHosts'],
    ['board.internal', 'allowedHosts'],
    [['board.internal', 'http://board.internal'], 'allowedHosts[1]'],
    [['board.internal:8080'], 'allowedHosts[0]'],
    [['::1'], 'allowedHosts[0]'],
    [['board.internal/locks'], 'allowedHosts[0]'],
    [['.'], 'allowedHosts[0]'],
    [[42], 'allowedHosts[0]'],
    [['user@board.internal'], 'allowedHosts[0]'],
  ])('refuses %j at register() and registerAsync(), naming %s', async (allowedHosts, option) => {
    const call = () => RedisLockBoardModule.register({ allowedHosts: allowedHosts as string[], allowWithoutGuards: true });
    expect(call).toThrow(InvalidLockOptionsError);
    expect(call).toThrow(`RedisLockBoardModule.register: Option "${option}"`);
    const compiling = Test.createTestingModule({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
        RedisLockBoardModule.registerAsync({ useFactory: () => ({ allowedHosts: allowedHosts as string[], allowWithoutGuards: true }) }),
      ],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await expect(compiling).rejects.toThrow(`RedisLockBoardModule.registerAsync: Option "${option}"`);
  });

  it('warns when a board releases by force without guards and answers any host, and not once allowedHosts is set', async () => {
    for (const [board, warned] of [
      [{ allowForceRelease: true, allowWithoutGuards: true }, true],
      [{ allowForceRelease: true, allowWithoutGuards: true, allowedHosts: ['localhost'] }, false],
    ] as const) {
      const logs = new CapturedLogs();
      const app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register(board)] }, { adapter: new ExpressAdapter(), logs, logger: logs });
      await app.init();
      expect(logs.has('warn', 'DNS rebinding'), JSON.stringify(board)).toBe(warned);
      if (warned) expect(logs.lines.find((line) => line.message.includes('DNS rebinding'))!.message).toContain('allowedHosts');
      await app.close();
    }
  });
});
