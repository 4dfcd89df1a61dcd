import { get } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { FEED_BACKLOG_LIMIT } from '../../lib/board/lock-board.feed.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { AdminCookieGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Found by review. The board's live feed (`api/events`) is written by Nest's `@Sse()`, which on
 * `@nestjs/core` before 11.2.8 (the peer range starts at 11.0.0) queues every event for a client
 * that reads nothing, for as long as the connection lasts: a browser tab on a laptop gone to
 * sleep, a proxy that stopped reading, or a logged-in user holding a connection open, and each
 * lock event of a busy service stays in the server's memory. Later versions drop such a client
 * past 4 M characters queued. The board now ends a feed itself once its connection has not
 * drained while `FEED_BACKLOG_LIMIT` events were written to it (the page reloads the list every
 * second, and an EventSource connects again), whatever Nest version serves it.
 */
describe('the lock board live feed of a client that reads nothing', () => {
  let app: INestApplication | undefined;
  let client: Socket | undefined;
  afterEach(async () => {
    client?.destroy();
    await app?.close();
    app = undefined;
  });

  it('is ended by the board once events wait for it, not queued until Nest gives up on it', { timeout: 60_000 }, async () => {
    const logs = new CapturedLogs();
    app = await createHttpApp(
      { imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminCookieGuard] })] },
      { logs, logger: logs },
    );
    const url = new URL(`${await listenOnLoopback(app)}/locks/api/events`);
    const locks = app.get(LockService);
    // A client that sends its request, reads the response's head, and then nothing.
    const socket = (client = connect(Number(url.port), url.hostname));
    let closed = false;
    socket.on('close', () => (closed = true)).on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nCookie: session=admin\r\nAccept: text/event-stream\r\n\r\n`);
    const head = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))));
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    socket.pause();
    // Lock events, each about 200 characters on the feed, until either side ends the feed (the
    // kernel's socket buffers take the first few megabytes).
    const boardWarned = (): boolean => logs.has('warn', 'read none of its live feed');
    const nestWarned = (): boolean => logs.has('warn', 'The client is not reading its events');
    let events = 0;
    while (!boardWarned() && !nestWarned() && events < 400_000) {
      for (let i = 0; i < 500; i++) await (await locks.acquire(`feed:${events % 1_000}`)).release();
      events += 1_000;
      // Nest writes a waiting event once the one before has been taken in: give it turns.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect({ boardWarned: boardWarned(), nestWarned: nestWarned() }).toEqual({ boardWarned: true, nestWarned: false });
    // The connection is gone: what the kernel held reaches the client, then its end.
    socket.resume();
    await expect.poll(() => closed, { timeout: 10_000 }).toBe(true);
  });

  it('keeps the feed of a client that reads it, through as many events', { timeout: 60_000 }, async () => {
    const logs = new CapturedLogs();
    app = await createHttpApp(
      { imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminCookieGuard] })] },
      { logs, logger: logs },
    );
    const url = `${await listenOnLoopback(app)}/locks/api/events`;
    const locks = app.get(LockService);
    let received = '';
    let closed = false;
    await new Promise<void>((resolve, reject) => {
      get(url, { headers: { cookie: 'session=admin' } }, (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (received = (received + chunk).slice(-2_000)));
        response.on('close', () => (closed = true));
        resolve();
      }).on('error', reject);
    });
    for (let events = 0; events < 3 * FEED_BACKLOG_LIMIT; events += 1_000) {
      for (let i = 0; i < 500; i++) await (await locks.acquire(`read:${events + 2 * i}`)).release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const last = `read:${3 * FEED_BACKLOG_LIMIT - 2}`;
    await expect.poll(() => received, { timeout: 20_000 }).toContain(`"key":"${last}"`);
    expect({ closed, warned: logs.lines.filter((line) => line.level === 'warn') }).toEqual({ closed: false, warned: [] });
  });
});
