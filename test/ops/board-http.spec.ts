import { get } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe.each([
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
])('lock board over HTTP on %s', (_platform, adapter) => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(store: 'redis' | 'memory' = 'redis'): Promise<string> {
    const locks = store === 'redis' ? RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }) : RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true });
    const moduleRef = await Test.createTestingModule({
      imports: [locks, RedisLockBoardModule.register({ allowForceRelease: true, pageSize: 2 })],
    })
      .setLogger(new CapturedLogs())
      .compile();
    app = moduleRef.createNestApplication(adapter(), { logger: false });
    app.setGlobalPrefix('ops');
    await app.listen(0, '127.0.0.1');
    return `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops/locks`;
  }

  it.each(['redis', 'memory'] as const)('serves the page under the global prefix, pages through locks, and force-releases only a confirmed JSON request (%s)', async (store) => {
    const url = await start(store);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    // Links follow the path the page was asked for, escaped.
    expect(html).toContain('src="/ops/locks/board.js"');
    expect((await fetch(`${url}/board.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${url}/board.css`)).headers.get('content-type')).toMatch(/^text\/css/);

    const locks = app!.get(LockService);
    const held = await Promise.all(['a', 'b', 'c', '}odd', '\\back'].map((key) => locks.acquire(key, { label: `job ${key}` })));
    const seen = new Set<string>();
    let cursor = '0';
    for (let pages = 0; pages < 50; pages++) {
      const body = (await (await fetch(`${url}/api/locks?cursor=${encodeURIComponent(cursor)}`)).json()) as { cursor: string; locks: { key: string; holder: { label: string } }[] };
      for (const lock of body.locks) {
        seen.add(lock.key);
        expect(lock.holder.label).toBe(`job ${lock.key}`);
      }
      cursor = body.cursor;
      if (cursor === '0') break;
    }
    expect([...seen].sort()).toEqual(['\\back', 'a', 'b', 'c', '}odd']);

    const released = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: '}odd', confirm: '}odd' }) });
    expect(await released.json()).toEqual({ released: true });
    await expect.poll(() => held[3]!.extend().then(() => 'held', () => 'lost')).toBe('lost');
    const again = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: '}odd', confirm: '}odd' }) });
    expect(await again.json()).toEqual({ released: false });
    const text = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ key: 'a', confirm: 'a' }) });
    expect(text.status).toBeGreaterThanOrEqual(400);
    expect(await locks.isLocked('a')).toBe(true);

    await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
  });

  it('ends an open live feed at app.close()', async () => {
    const url = await start();
    const locks = app!.get(LockService);
    const received: string[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      get(`${url}/api/events`, (response) => {
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
