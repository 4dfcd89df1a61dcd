import { get } from 'node:http';
import { Module, type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule, type LockBoardOptions } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { AdminCookieGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { startRedisServer } from '../support/redis-server.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/** The application's own guard: an admin session cookie, which a browser also sends cross-site. */
const ADMIN = { cookie: 'session=admin' };
/** What the board's own script sends with a release. */
const BOARD_HEADERS = { ...ADMIN, 'content-type': 'application/json', 'x-lock-board': '1' };

/** A provider the async factory reads its settings from, as a ConfigService would. */
const BOARD_SETTINGS = Symbol('BOARD_SETTINGS');
@Module({ providers: [{ provide: BOARD_SETTINGS, useValue: { release: true, pageSize: 2 } }], exports: [BOARD_SETTINGS] })
class SettingsModule {}

type Page = { cursor: string; complete: boolean; locks: { key: string; held: boolean; holder?: { label: string }; holderId?: string; semaphore?: unknown }[] };

/** `tolerant`: a router that serves `//locks` and `/locks/` as `/locks` (Fastify's options; Express 5 serves `/locks/` anyway). */
const adapters = [
  ['Express', (_tolerant = false) => new ExpressAdapter()],
  ['Fastify', (tolerant = false) => new FastifyAdapter(tolerant ? { routerOptions: { ignoreDuplicateSlashes: true, ignoreTrailingSlash: true } } : {})],
] as const;

describe.each(adapters)('lock board over HTTP on %s', (_platform, adapter) => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  let logs: CapturedLogs;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(store: 'redis' | 'memory' = 'redis', board: LockBoardOptions = { allowForceRelease: true, pageSize: 2, guards: [AdminCookieGuard] }): Promise<string> {
    const locks = store === 'redis' ? RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }) : RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true });
    return listen({ imports: [locks, RedisLockBoardModule.register(board)] });
  }

  async function listen(metadata: ModuleMetadata, prefix = 'ops', tolerant = false): Promise<string> {
    logs = new CapturedLogs();
    app = await createHttpApp(metadata, { adapter: adapter(tolerant), logs, logger: logs });
    if (prefix) app.setGlobalPrefix(prefix);
    return `${await listenOnLoopback(app)}${prefix ? `/${prefix}` : ''}/locks`;
  }

  async function walk(url: string): Promise<Page[]> {
    const pages: Page[] = [];
    let cursor = '0';
    do {
      const response = await fetch(`${url}/api/locks?cursor=${encodeURIComponent(cursor)}`, { headers: ADMIN });
      expect(response.status).toBe(200);
      const page = (await response.json()) as Page;
      pages.push(page);
      cursor = page.cursor;
    } while (cursor !== '0' && pages.length < 100);
    return pages;
  }

  /** The body of a release by force of the acquisition the list shows for `key`, as the page sends it. */
  async function releaseOf(url: string, key: string): Promise<string> {
    const holder = (await walk(url)).flatMap((page) => page.locks).find((lock) => lock.key === key)?.holderId;
    expect(holder).toMatch(/^[\w-]{22}$/);
    return JSON.stringify({ key, confirm: key, holder });
  }

  it.each(['redis', 'memory'] as const)('serves the page under the global prefix, pages through locks, and force-releases only a confirmed JSON request (%s)', async (store) => {
    const url = await start(store);
    const page = await fetch(url, { headers: ADMIN });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    // Links are relative to the page.
    expect(html).toContain('src="./locks/board.js"');
    expect((await fetch(`${url}/board.js`, { headers: ADMIN })).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${url}/board.css`, { headers: ADMIN })).headers.get('content-type')).toMatch(/^text\/css/);

    const locks = app!.get(LockService);
    const held = await Promise.all(['a', 'b', 'c', '}odd', '\\back'].map((key) => locks.acquire(key, { label: `job ${key}` })));
    const seen = new Set<string>();
    for (const body of await walk(url)) {
      for (const lock of body.locks) {
        seen.add(lock.key);
        expect(lock.holder!.label).toBe(`job ${lock.key}`);
      }
    }
    expect([...seen].sort()).toEqual(['\\back', 'a', 'b', 'c', '}odd']);

    const release = (body: string) => fetch(`${url}/api/locks/release`, { method: 'POST', headers: BOARD_HEADERS, body });
    const odd = await releaseOf(url, '}odd');
    const released = await release(odd);
    expect(await released.json()).toEqual({ released: true });
    await expect.poll(() => held[3]!.extend().then(() => 'held', () => 'lost')).toBe('lost');
    expect(await (await release(odd)).json()).toEqual({ released: false });
    // Taken again: a release naming the acquisition seen before leaves the new one alone.
    const again = await locks.acquire('}odd');
    expect(await (await release(odd)).json()).toEqual({ released: false });
    expect(again.held).toBe(true);
    await again.release();
    const unconfirmed = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: BOARD_HEADERS, body: JSON.stringify({ key: 'a' }) });
    expect(unconfirmed.status).toBe(400);
    // Without the acquisition it names: refused, naming the field.
    const unnamed = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: BOARD_HEADERS, body: JSON.stringify({ key: 'a', confirm: 'a' }) });
    expect(unnamed.status).toBe(400);
    expect(await unnamed.text()).toContain('holder');
    expect(await locks.isLocked('a')).toBe(true);

    await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
  });

  describe('refuses a release that a cross-site page could send (CSRF)', () => {
    const form = () => {
      const data = new FormData();
      data.set('key', 'payments');
      data.set('confirm', 'payments');
      return data;
    };
    const json = JSON.stringify({ key: 'payments', confirm: 'payments' });
    // The status each shape gets, as docs/observability.md states it: 415 for a body that is not
    // JSON, 403 for JSON that lacks the board's header or comes from another site. (Fastify, with
    // no multipart parser, answers a multipart body 415 itself, before the board's check.)
    const shapes: [string, 403 | 415, () => RequestInit][] = [
      ['a form-encoded body', 415, () => ({ headers: { ...ADMIN, 'content-type': 'application/x-www-form-urlencoded' }, body: 'key=payments&confirm=payments' })],
      ['a form-encoded body with the custom header', 415, () => ({ headers: { ...ADMIN, 'content-type': 'application/x-www-form-urlencoded', 'x-lock-board': '1' }, body: 'key=payments&confirm=payments' })],
      ['a multipart body', 415, () => ({ headers: ADMIN, body: form() })],
      ['a text/plain body', 415, () => ({ headers: { ...ADMIN, 'content-type': 'text/plain' }, body: json })],
      ['JSON without the custom header', 403, () => ({ headers: { ...ADMIN, 'content-type': 'application/json' }, body: json })],
      ['JSON with a cross-site Origin', 403, () => ({ headers: { ...BOARD_HEADERS, origin: 'https://evil.example' }, body: json })],
      ['JSON with Origin: null', 403, () => ({ headers: { ...BOARD_HEADERS, origin: 'null' }, body: json })],
      ['JSON with Sec-Fetch-Site: cross-site', 403, () => ({ headers: { ...BOARD_HEADERS, 'sec-fetch-site': 'cross-site' }, body: json })],
      ['JSON with Sec-Fetch-Site: same-site', 403, () => ({ headers: { ...BOARD_HEADERS, 'sec-fetch-site': 'same-site' }, body: json })],
    ];
    it.each(shapes)('%s: answers %i and the lock stays held', async (_shape, status, init) => {
      const url = await start();
      const lock = await app!.get(LockService).acquire('payments', { label: 'PaymentsJob.run' });
      const response = await fetch(`${url}/api/locks/release`, { method: 'POST', ...init() });
      expect(response.status).toBe(status);
      expect(await redis.exists('lock:{payments}')).toBe(1);
      await lock.extend();
      await lock.release();
    });

    it('accepts the board\'s own request: JSON, the custom header, a same-origin Origin or none', async () => {
      const url = await start();
      const locks = app!.get(LockService);
      await locks.acquire('payments');
      const sameOrigin = await fetch(`${url}/api/locks/release`, {
        method: 'POST',
        headers: { ...BOARD_HEADERS, origin: new URL(url).origin, 'sec-fetch-site': 'same-origin' },
        body: await releaseOf(url, 'payments'),
      });
      expect(await sameOrigin.json()).toEqual({ released: true });
      expect(await redis.exists('lock:{payments}')).toBe(0);
      // curl and other clients that send no Origin.
      await locks.acquire('payments');
      const noOrigin = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: { ...BOARD_HEADERS, 'content-type': 'application/json; charset=utf-8' }, body: await releaseOf(url, 'payments') });
      expect(await noOrigin.json()).toEqual({ released: true });
    });
  });

  describe('query parameters', () => {
    it.each([
      ['99999999999999999999999'],
      ['18446744073709551616'],
      ['abc'],
      ['-1'],
      ['1-2-3'],
      // The skipped-nodes suffix of a quorum walk's cursor, on one server.
      ['12s1'],
      ['0-12s1'],
      [''],
      ['0'.repeat(100)],
    ])('answers 400 naming "cursor" for cursor=%j', async (cursor) => {
      const url = await start();
      const response = await fetch(`${url}/api/locks?cursor=${encodeURIComponent(cursor)}`, { headers: ADMIN });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { message: string }).message).toMatch(/"cursor"/);
    });

    it('answers 400 for a repeated or unknown parameter, and accepts the largest SCAN cursor', async () => {
      const url = await start();
      const repeated = await fetch(`${url}/api/locks?cursor=0&cursor=1`, { headers: ADMIN });
      expect(repeated.status).toBe(400);
      expect(((await repeated.json()) as { message: string }).message).toMatch(/"cursor"/);
      const unknown = await fetch(`${url}/api/locks?cursr=0`, { headers: ADMIN });
      expect(unknown.status).toBe(400);
      expect(((await unknown.json()) as { message: string }).message).toMatch(/"cursr"/);
      expect((await fetch(`${url}/api/locks?cursor=18446744073709551615`, { headers: ADMIN })).status).toBe(200);
      expect((await fetch(`${url}/api/locks`, { headers: ADMIN })).status).toBe(200);
    });
  });

  it.each([
    ['ops', '//ops/locks', './locks'],
    ['ops', '/ops/locks/', '.'],
    ['ops', '/ops//locks', './locks'],
    ['', '//locks', './locks'],
    ['', '/locks/', '.'],
  ])('links its assets relative to the page (global prefix %j, asked at %s)', async (prefix, path, base) => {
    const url = await listen({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminCookieGuard] })] }, prefix, true);
    const origin = new URL(url).origin;
    const response = await fetch(`${origin}${path}`, { headers: ADMIN });
    // Express 5 routes no duplicate slash: nothing is served there.
    if (_platform === 'Express' && path.includes('//')) return expect(response.status).toBe(404);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`data-base="${base}"`);
    expect(html).not.toMatch(/(?:href|src|data-base)="\/\//);
    for (const asset of [...html.matchAll(/(?:href|src)="(\.[^"]*)"/g)].map((match) => match[1]!)) {
      const resolved = new URL(asset, `${origin}${path}`);
      expect(resolved.origin).toBe(origin);
      expect((await fetch(resolved, { headers: ADMIN })).status).toBe(200);
    }
  });

  it('finds the locks among 20,000 unrelated keys: full pages, and complete only at the end', async () => {
    const url = await start('redis', { pageSize: 50, guards: [AdminCookieGuard] });
    for (let from = 0; from < 20_000; from += 1_000) {
      await redis.mset(...Array.from({ length: 1_000 }, (_, i) => [`cache:${from + i}`, 'x']).flat());
    }
    const locks = app!.get(LockService);
    const held = await Promise.all(['invoice:1', 'invoice:2', 'invoice:3'].map((key) => locks.acquire(key)));
    const [first] = await walk(url);
    expect(first!.locks.map((lock) => lock.key).sort()).toEqual(['invoice:1', 'invoice:2', 'invoice:3']);
    expect(first!.complete).toBe(true);
    expect(first!.cursor).toBe('0');
    await Promise.all(held.map((lock) => lock.release()));
    const empty = await walk(url);
    expect(empty.at(-1)).toMatchObject({ complete: true, locks: [] });
    for (const page of empty.slice(0, -1)) expect(page.complete).toBe(false);
  });

  it('fills a page across scan steps and ends with the last lock', async () => {
    const url = await start();
    for (let from = 0; from < 5_000; from += 1_000) {
      await redis.mset(...Array.from({ length: 1_000 }, (_, i) => [`cache:${from + i}`, 'x']).flat());
    }
    const locks = app!.get(LockService);
    const held = await Promise.all(['x', 'y', 'z'].map((key) => locks.acquire(key)));
    const pages = await walk(url);
    expect(pages[0]!.locks.length).toBeGreaterThanOrEqual(2);
    expect(pages.flatMap((page) => page.locks.map((lock) => lock.key)).sort()).toEqual(['x', 'y', 'z']);
    expect(pages.at(-1)!.complete).toBe(true);
    await Promise.all(held.map((lock) => lock.release()));
  });

  it.each(['redis', 'memory'] as const)('lists a semaphore with its holders, permits used, limit and waiters (%s)', async (store) => {
    const url = await start(store, { pageSize: 50, guards: [AdminCookieGuard] });
    const locks = app!.get(LockService);
    const one = await locks.acquire('exports', { limit: 3, permits: 2, label: 'BigExport.run' });
    const two = await locks.acquire('exports', { limit: 3, label: 'SmallExport.run' });
    const waiting = locks.acquire('exports', { limit: 3, permits: 2, waitTimeout: 30_000, label: 'Waiting.run' });
    // Settled by the test; a failing test must not leave an unhandled rejection at shutdown.
    waiting.catch(() => undefined);
    await expect.poll(async () => (await locks.inspect('exports')).semaphore?.waiters).toBe(1);
    const [page] = await walk(url);
    const row = page!.locks.find((lock) => lock.key === 'exports');
    expect(row).toMatchObject({
      held: false,
      semaphore: {
        limit: 3,
        used: 3,
        waiters: 1,
        holders: expect.arrayContaining([
          expect.objectContaining({ permits: 2, fencingToken: one.fencingToken, holder: expect.objectContaining({ label: 'BigExport.run' }) }),
          expect.objectContaining({ permits: 1, fencingToken: two.fencingToken, holder: expect.objectContaining({ label: 'SmallExport.run' }) }),
        ]),
      },
    });
    await one.release();
    await two.release();
    await (await waiting).release();
  });

  it('is built by registerAsync() from injected settings', async () => {
    const url = await listen({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
        RedisLockBoardModule.registerAsync({
          path: 'locks',
          guards: [AdminCookieGuard],
          imports: [SettingsModule],
          inject: [BOARD_SETTINGS],
          useFactory: (settings: { release: boolean; pageSize: number }) => ({ allowForceRelease: settings.release, pageSize: settings.pageSize }),
        }),
      ],
    });
    expect((await fetch(url)).status).toBe(403);
    expect((await fetch(url, { headers: ADMIN })).status).toBe(200);
    const locks = app!.get(LockService);
    await Promise.all(Array.from({ length: 30 }, (_, i) => locks.acquire(`k${i}`)));
    await locks.acquire('a');
    // pageSize 2 from the factory: the first page stops early (a page may take the whole last
    // SCAN step, so it can hold a few more than 2), where the default of 50 would list all 31.
    const pages = await walk(url);
    expect(pages[0]!.complete).toBe(false);
    expect(pages[0]!.locks.length).toBeLessThan(31);
    expect(new Set(pages.flatMap((page) => page.locks.map((lock) => lock.key))).size).toBe(31);
    const released = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: BOARD_HEADERS, body: await releaseOf(url, 'a') });
    expect(await released.json()).toEqual({ released: true });
  });

  describe('without guards', () => {
    it('refuses allowForceRelease at startup, naming the option, from register() and registerAsync()', async () => {
      expect(() => RedisLockBoardModule.register({ allowForceRelease: true })).toThrow(/RedisLockBoardModule\.register: Option "allowForceRelease".*guards.*allowWithoutGuards/s);
      const compiling = Test.createTestingModule({
        imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.registerAsync({ useFactory: () => ({ allowForceRelease: true }) })],
      })
        .setLogger(new CapturedLogs())
        .compile();
      await expect(compiling).rejects.toThrow(/RedisLockBoardModule\.registerAsync: Option "allowForceRelease".*allowWithoutGuards/s);
    });

    it('accepts allowForceRelease with the explicit opt-out, without a warning once its hosts are listed', async () => {
      const url = await start('redis', { allowForceRelease: true, allowWithoutGuards: true, allowedHosts: ['127.0.0.1'] });
      await app!.get(LockService).acquire('k');
      const released = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: BOARD_HEADERS, body: await releaseOf(url, 'k') });
      expect(await released.json()).toEqual({ released: true });
      expect(logs.lines.filter((line) => line.level === 'warn')).toEqual([]);
    });

    // A read-only board without guards is refused too (test/ops/board-without-guards-served-open.spec.ts).
    it('starts without a warning when it has guards', async () => {
      await start('redis', { guards: [AdminCookieGuard] });
      expect(logs.lines.filter((line) => line.level === 'warn')).toEqual([]);
    });
  });

  // The interceptor's rule (a 503 for a Redis that did not answer, or could not be asked, carries
  // Retry-After: 1): an open tab's poll, or a script of the operator's, spaces its retries alike.
  it('answers a list and a release by force that Redis could not be asked 503 with Retry-After: 1', { timeout: 30_000 }, async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop());
    const client = new Redis(server.url, { enableOfflineQueue: false, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    onTestFinished(() => void client.disconnect());
    // Connected before the first list: without an offline queue, a command sent while it still
    // connects is refused unsent (a 503 from the board, rightly, under load).
    if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
    const url = await listen({ imports: [RedisLockModule.forRoot({ redis: client, isGlobal: true }), RedisLockBoardModule.register({ allowForceRelease: true, guards: [AdminCookieGuard] })] });
    const release = (): Promise<Response> =>
      fetch(`${url}/api/locks/release`, { method: 'POST', headers: BOARD_HEADERS, body: JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId('someone-else') }) });
    expect((await fetch(`${url}/api/locks`, { headers: ADMIN })).status).toBe(200);
    await server.stop();
    const answers = [await fetch(`${url}/api/locks`, { headers: ADMIN }), await release()];
    // Failed: [503, null] each, where the interceptor's 503s for such a Redis carry Retry-After: 1.
    expect(answers.map((answer) => [answer.status, answer.headers.get('retry-after')])).toEqual([
      [503, '1'],
      [503, '1'],
    ]);
  });

  it('ends an open live feed at app.close()', async () => {
    const url = await start();
    const locks = app!.get(LockService);
    const received: string[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      get(`${url}/api/events`, { headers: ADMIN }, (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => received.push(chunk));
        response.on('close', () => resolve());
      }).on('error', reject);
    });
    await expect.poll(() => (locks as unknown as { manager: { listening: boolean } }).manager.listening).toBe(true);
    await (await locks.acquire('fed')).release();
    await expect.poll(() => received.join('')).toContain('"type":"released"');
    await app!.close();
    app = undefined;
    await ended;
  });
});

describe('lock board over HTTP in quorum mode', () => {
  const servers = useQuorumServers();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('answers 400 for a node index out of range, and pages through a node', { timeout: 30_000 }, async () => {
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: servers.map((server) => server.url), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminCookieGuard] })],
    });
    const url = `${await listenOnLoopback(app)}/locks`;
    // No watchdog: a renewal finding node 0's copy gone restores it there, and node 1's page would
    // then rightly list nothing.
    const lock = await app.get(LockService).acquire('q:1', { ttl: 30_000, autoRenew: false });
    for (const cursor of ['3-0', '99-0', '99999999999-0']) {
      const response = await fetch(`${url}/api/locks?cursor=${cursor}`, { headers: ADMIN });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { message: string }).message).toMatch(/"cursor".*node/);
    }
    // Node 0 loses the lock (as a node restarted empty would): node 1's and node 2's pages list
    // it (each node's pages list what it holds), node 0's does not. The acquire
    // answered once a majority had the lock: a node's SET may still be on its way (a
    // loaded machine), and node 0's landing after the DEL would give it the lock back. Every node
    // has it first.
    const nodes = servers.map((server) => new Redis(server.url));
    onTestFinished(() => nodes.forEach((node) => node.disconnect()));
    for (const node of nodes) await expect.poll(() => node.exists('lock:{q:1}'), { timeout: 10_000 }).toBe(1);
    await nodes[0]!.del('lock:{q:1}');
    const page = async (cursor: string): Promise<string[]> => ((await (await fetch(`${url}/api/locks?cursor=${cursor}`, { headers: ADMIN })).json()) as Page).locks.map((held) => held.key);
    await expect.poll(() => page('1-0'), { timeout: 10_000 }).toEqual(['q:1']);
    expect(await page('2-0')).toEqual(['q:1']);
    expect(await page('0')).toEqual([]);
    await lock.release();
  });
});
