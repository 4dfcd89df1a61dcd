/**
 * Review (HTTP answers): a route whose lock call met a Redis that could not be asked for now got
 * a 500 and a Nest ERROR log with its stack per request, where the same Redis frozen (no answer
 * within the call's bound: `RedisUnansweredError`) gets 503 with `Retry-After: 1`, and a `@Locked`
 * wait that met it 503 too: `isLocked()`, `inspect()`, `tryAcquire()` and `extend()` through a
 * client that fails fast while its connection is down (ioredis `enableOfflineQueue: false`, here
 * with redis-server stopped), and a `FencedRedis` write that client refused unsent ("nothing was
 * written. Try again once Redis answers."). They are `RedisUnavailableError`s now, answered 503
 * with `Retry-After: 1`, naming no key. What asking again cannot cure stays a 500 that Nest logs:
 * a client its owner closed (a programming error), as a refusal for good (NOPERM) does.
 */
import { Controller, Get, Query, type INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockModule } from '../../lib/index.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';

let client: Redis;
let server: RedisServer;

/** Resolves once `node` has seen its connection close (not a command on its way as it closed). */
async function disconnected(node: Redis): Promise<void> {
  for (let waited = 0; node.status === 'ready' && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A key a request made: a forged log line, and long. */
const HOSTILE = `k\n[WARN] forged ${'x'.repeat(500)}`;

@Controller('calls')
class CallsController {
  constructor(private readonly locks: LockService) {}

  @Get('is-locked')
  async isLocked(@Query('key') key: string): Promise<boolean> {
    return this.locks.isLocked(key);
  }

  @Get('inspect')
  async inspect(@Query('key') key: string): Promise<boolean> {
    return (await this.locks.inspect(key)).held;
  }

  @Get('try-acquire')
  async tryAcquire(@Query('key') key: string): Promise<boolean> {
    return (await this.locks.tryAcquire(key)) !== null;
  }

  /** Takes the lock while Redis runs, then extends it once it is gone. */
  @Get('extend')
  async extend(@Query('key') key: string): Promise<string> {
    const lock = await this.locks.acquire(key);
    try {
      await server.stop();
      await disconnected(client);
      await lock.extend();
      return 'extended';
    } finally {
      await lock.release().catch(() => undefined);
    }
  }

  @Get('fenced-set')
  async fencedSet(@Query('key') key: string): Promise<string> {
    await new FencedRedis(client).set(key, '1', 7);
    return 'written';
  }
}

describe('LockConflictInterceptor and a Redis that cannot be asked for now', () => {
  let app: INestApplication | undefined;
  let logs: CapturedLogs;
  let url: string;

  beforeEach(async () => {
    server = await startRedisServer();
    client = new Redis(server.url, { enableOfflineQueue: false, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    logs = new CapturedLogs();
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: client, isGlobal: true })], controllers: [CallsController] }, { logs, logger: logs });
    url = `${await listenOnLoopback(app)}/calls`;
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    client.disconnect();
    await server.stop();
  });

  async function call(route: string): Promise<{ status: number; retryAfter: string | null; message: string }> {
    const response = await fetch(`${url}/${route}?key=${encodeURIComponent(HOSTILE)}`);
    const body = (await response.json()) as { message: string };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), message: body.message };
  }

  it.each(['is-locked', 'inspect', 'try-acquire', 'extend', 'fenced-set'])('GET /calls/%s answers 503 with Retry-After: 1, naming no key, logging no error', { timeout: 20_000 }, async (route) => {
    if (route !== 'extend') {
      await server.stop();
      await disconnected(client);
    }
    const got = await call(route);
    expect(got.status).toBe(503);
    expect(got.retryAfter).toBe('1');
    expect(got.message).not.toContain('forged');
    expect(got.message).not.toContain('\n');
    expect(logs.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('leaves a call through a client its owner closed a 500 that Nest logs', { timeout: 20_000 }, async () => {
    client.disconnect();
    const got = await call('is-locked');
    expect(got.status).toBe(500);
    expect(got.retryAfter).toBeNull();
    expect(logs.lines.some((line) => line.level === 'error' && line.message.includes('isLocked('))).toBe(true);
  });
});

describe('LockConflictInterceptor and a quorum whose majority of masters cannot be asked for now', () => {
  let app: INestApplication | undefined;
  let servers: RedisServer[] = [];
  let clients: Redis[] = [];
  afterEach(async () => {
    await app?.close();
    app = undefined;
    for (const each of clients) each.disconnect();
    await Promise.all(servers.map((each) => each.stop()));
    servers = [];
    clients = [];
  });

  // "Quorum not reached to check the lock: 1 of 3 Redis nodes answered, 2 needed (node 1: Stream
  // isn't writeable ...; node 2: ...)": each failure passes, so the whole does too.
  it.each(['is-locked', 'inspect'])('GET /calls/%s answers 503 with Retry-After: 1, logging no error', { timeout: 30_000 }, async (route) => {
    servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
    clients = servers.map((each) => {
      const node = new Redis(each.url, { enableOfflineQueue: false, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
      node.on('error', () => undefined);
      return node;
    });
    const logs = new CapturedLogs();
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: clients, isGlobal: true })], controllers: [CallsController] }, { logs, logger: logs });
    const url = `${await listenOnLoopback(app)}/calls`;
    await servers[1]!.stop();
    await servers[2]!.stop();
    await disconnected(clients[1]!);
    await disconnected(clients[2]!);
    const response = await fetch(`${url}/${route}?key=${encodeURIComponent(HOSTILE)}`);
    const body = (await response.json()) as { message: string };
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(body.message).not.toContain('forged');
    expect(logs.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});
