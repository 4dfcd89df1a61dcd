import {
  Controller,
  Get,
  HttpCode,
  Injectable,
  Module,
  Param,
  ParseIntPipe,
  Post,
  SetMetadata,
  Sse,
  UseGuards,
  UseInterceptors,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type MessageEvent,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ApiOperation, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Observable, interval, map, take, tap } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockConflictInterceptor, LockNotAcquiredError, LockService, Locked, RedisLockModule } from '../lib/index.js';
import { listenOnLoopback } from './support/http-app.js';
import { CapturedLogs, sleep } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

const spans: { id: string; start: number; end: number }[] = [];
/** The stream route's emissions and its lock's events, in the order they happened. */
const streamLog: string[] = [];

async function work(id: string, ms: number): Promise<{ id: string }> {
  const start = performance.now();
  await sleep(ms);
  spans.push({ id, start, end: performance.now() });
  return { id };
}

/** Lets a request through only if the handler carries the `open` metadata or the header. */
@Injectable()
class DoorGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    if (this.reflector.get<boolean>('open', context.getHandler())) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
    return request.headers['x-key'] === 'yes';
  }
}

@Injectable()
class Inventory {
  @Locked('stock:<0>', { waitTimeout: 0 })
  async reserve(sku: string): Promise<{ sku: string }> {
    await sleep(150);
    return { sku };
  }
}

@Controller('items')
class ItemsController {
  constructor(private readonly inventory: Inventory, private readonly locks: LockService) {}

  @Post('fail-fast/:id')
  @Locked('item:<0>', { waitTimeout: 0 })
  failFast(@Param('id') id: string) {
    return work(id, 150);
  }

  @Post('queue/:id')
  @Locked('item:<0>', { waitTimeout: 10_000 })
  queue(@Param('id') id: string) {
    return work(id, 60);
  }

  @Post('numbered/:n')
  @Locked('number:<0>')
  numbered(@Param('n', ParseIntPipe) n: number) {
    return { n, type: typeof n, key: this.locks.current()?.key };
  }

  @Post('guarded/:id')
  @ApiOperation({ summary: 'A guarded, locked route' })
  @HttpCode(202)
  @UseGuards(DoorGuard)
  @Locked('guarded:<0>')
  @SetMetadata('open', false)
  guarded(@Param('id') id: string) {
    return { id, token: this.locks.current()?.fencingToken };
  }

  @SetMetadata('open', true)
  @Locked('opened:<0>')
  @UseGuards(DoorGuard)
  @Get('opened/:id')
  opened(@Param('id') id: string) {
    return { id };
  }

  @Post('reserve/:sku')
  reserve(@Param('sku') sku: string) {
    return this.inventory.reserve(sku);
  }

  @Get('stream/:id')
  @Locked('stream:<0>')
  stream(@Param('id') id: string): Observable<string[]> {
    return interval(40).pipe(
      take(3),
      map((i) => [id, String(i)]),
      tap(([, i]) => streamLog.push(`emitted ${i}`)),
    );
  }

  @Sse('events/:id')
  @Locked('sse:<0>', { waitTimeout: 0 })
  events(@Param('id') id: string): Observable<MessageEvent> {
    return interval(30).pipe(map((i) => ({ data: { id, i } })));
  }
}

@Module({ providers: [Inventory, DoorGuard], controllers: [ItemsController] })
class ItemsModule {}

@Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), ItemsModule] })
class AppModule {}

describe.each([
  ['express', () => new ExpressAdapter()],
  ['fastify', () => new FastifyAdapter()],
])('@Locked over HTTP on %s', (_platform, adapter) => {
  const redis = useRedis();
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    app = await NestFactory.create(AppModule, adapter(), { logger: new CapturedLogs(), forceCloseConnections: true });
    base = await listenOnLoopback(app);
  });
  afterAll(() => app?.close());

  const post = (path: string, headers: Record<string, string> = {}) => fetch(`${base}/items/${path}`, { method: 'POST', headers });

  it('lets one of several concurrent requests in and answers 409 to the others when waitTimeout is 0', async () => {
    const responses = await Promise.all(Array.from({ length: 5 }, () => post('fail-fast/1')));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    const conflict = await responses.find((r) => r.status === 409)!.json();
    expect(conflict).toEqual({ statusCode: 409, error: 'Conflict', message: 'The resource is locked by another operation. Try again later.' });
    expect(JSON.stringify(conflict)).not.toContain('item:1');
  });

  it('serves queued requests in turn when they may wait, and different ids in parallel', async () => {
    spans.length = 0;
    const acquired: { key: string; afterWaiting: boolean }[] = [];
    const events = app.get(LockService).events$.subscribe((event) => event.type === 'acquired' && acquired.push({ key: event.key, afterWaiting: event.afterWaiting }));
    const responses = await Promise.all([...Array.from({ length: 4 }, () => post('queue/q')), post('queue/other')]).finally(() => events.unsubscribe());
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const queued = spans.filter((s) => s.id === 'q').sort((a, b) => a.start - b.start);
    for (let i = 1; i < queued.length; i++) expect(queued[i]!.start).toBeGreaterThanOrEqual(queued[i - 1]!.end);
    // Whoever came first on "q", the others waited for it; "other" never waited for anyone
    // (a start-time comparison would depend on how fast a loaded machine serves five requests).
    expect(acquired.filter((event) => event.key === 'item:q' && event.afterWaiting).length).toBeGreaterThanOrEqual(1);
    expect(acquired.filter((event) => event.key === 'item:other')).toEqual([{ key: 'item:other', afterWaiting: false }]);
    expect(await redis.keys('lock:{item:*}')).toEqual([]);
  });

  it('builds the key from the argument after pipes, and pipes still reject bad input', async () => {
    const ok = await post('numbered/42');
    expect(await ok.json()).toEqual({ n: 42, type: 'number', key: 'number:42' });
    expect((await post('numbered/abc')).status).toBe(400);
    expect(await redis.keys('lock:{number:abc}*')).toEqual([]);
  });

  it('answers 400, not 500, when a route parameter makes a key no lock can have (too long, not well-formed)', async () => {
    // A hostile client sends such ids at will: a 500 with an ERROR log and a stack trace each time.
    const long = await post(`fail-fast/${'x'.repeat(2_000)}`);
    // Fastify refuses a route parameter over 100 characters itself (414).
    expect([400, 414]).toContain(long.status);
    if (long.status === 400) {
      const body = (await long.json()) as { message: string };
      expect(body.message).toContain('lock key');
      expect(body.message).not.toContain('x'.repeat(100));
    }
    const broken = await post('fail-fast/%ED%A0%80');
    // A lone surrogate does not survive URL decoding as such: whatever the platform makes of it, never a 500.
    expect(broken.status).not.toBe(500);
    expect(await redis.keys('lock:{item:x*')).toEqual([]);
  });

  it('keeps guards, @HttpCode, Swagger and custom metadata working beside @Locked', async () => {
    expect((await post('guarded/g')).status).toBe(403);
    expect(await redis.keys('lock:{guarded:*')).toEqual([]);
    const allowed = await post('guarded/g', { 'x-key': 'yes' });
    expect(allowed.status).toBe(202);
    expect(await allowed.json()).toEqual({ id: 'g', token: Number(await redis.get('lock:{guarded:g}:fence')) });
    const opened = await fetch(`${base}/items/opened/o`);
    expect(opened.status).toBe(200);
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    expect(document.paths['/items/guarded/{id}']?.post?.summary).toBe('A guarded, locked route');
  });

  it('answers 409 when a plain route calls a busy @Locked provider method', async () => {
    const responses = await Promise.all([post('reserve/s1'), post('reserve/s1')]);
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  it('holds the lock of an Observable route until the stream completes', async () => {
    streamLog.length = 0;
    const events = app.get(LockService).events$.subscribe((event) => {
      if (event.key === 'stream:s' && (event.type === 'acquired' || event.type === 'released')) streamLog.push(event.type);
    });
    try {
      expect(await (await fetch(`${base}/items/stream/s`)).json()).toEqual(['s', '2']);
      await expect.poll(() => redis.exists('lock:{stream:s}')).toBe(0);
      // In this order whatever the machine's load: a release before the last emission would
      // show up between them, as a fixed pause cannot tell.
      await expect.poll(() => streamLog).toEqual(['acquired', 'emitted 0', 'emitted 1', 'emitted 2', 'released']);
    } finally {
      events.unsubscribe();
    }
  });

  it('holds the lock of an SSE stream until the client disconnects', async () => {
    const controller = new AbortController();
    const response = await fetch(`${base}/items/events/e`, { signal: controller.signal });
    const reader = response.body!.getReader();
    let received = '';
    try {
      while (!received.includes('"id":"e"')) received += new TextDecoder().decode((await reader.read()).value);
      expect(await redis.exists('lock:{sse:e}')).toBe(1);
      // SSE headers are out before the handler runs, so a busy lock arrives as an error event.
      const second = new AbortController();
      const busy = await fetch(`${base}/items/events/e`, { signal: second.signal });
      const busyReader = busy.body!.getReader();
      // Read until the error event, or the end of the stream (which would fail below): a slow
      // machine makes this take longer, not fail.
      let body = '';
      for (let read = await busyReader.read(); !read.done; read = await busyReader.read()) {
        body += new TextDecoder().decode(read.value);
        if (body.includes('locked')) break;
      }
      second.abort();
      expect(body).toMatch(/locked by another operation/);
      expect(body).not.toContain('sse:e');
    } finally {
      controller.abort();
    }
    await reader.cancel().catch(() => undefined);
    // Released once the server sees the client gone (however long that takes).
    await expect.poll(() => redis.exists('lock:{sse:e}'), { timeout: 30_000 }).toBe(0);
  });
});

describe('exposeKeyInHttpErrors', () => {
  useRedis();
  it('names the key in the 409 body when asked to', async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true, exposeKeyInHttpErrors: true }), ItemsModule] })
    class ExposingModule {}
    const app = await NestFactory.create(ExposingModule, new ExpressAdapter(), { logger: new CapturedLogs(), forceCloseConnections: true });
    const base = await listenOnLoopback(app);
    try {
      const responses = await Promise.all([1, 2].map(() => fetch(`${base}/items/fail-fast/7`, { method: 'POST' })));
      const conflict = responses.find((r) => r.status === 409)!;
      expect(((await conflict.json()) as { message: string }).message).toBe('Lock "item:7" is locked by another operation. Try again later.');
    } finally {
      await app.close();
    }
  });
});

/** The same busy lock behind a controller that applies the mapping itself and one that does not. */
@Controller('mapped')
@UseInterceptors(LockConflictInterceptor)
class MappedController {
  @Post(':id')
  @Locked('mapped:<0>', { waitTimeout: 0 })
  take(@Param('id') id: string) {
    return { id };
  }

  @Post('unavailable/:id')
  unavailable(@Param('id') id: string) {
    throw new LockNotAcquiredError(id, 0, { cause: new Error('connect ECONNREFUSED') });
  }
}

@Controller('unmapped')
class UnmappedController {
  @Post(':id')
  @Locked('unmapped:<0>', { waitTimeout: 0 })
  take(@Param('id') id: string) {
    return { id };
  }
}

@Module({ controllers: [MappedController, UnmappedController] })
class OptOutFeatureModule {}

describe.each([
  ['forRoot', () => RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true, globalInterceptor: false, exposeKeyInHttpErrors: true })],
  ['forRootAsync', () => RedisLockModule.forRootAsync({ isGlobal: true, globalInterceptor: false, useFactory: async () => ({ redis: redisUrl(), exposeKeyInHttpErrors: true }) })],
])('globalInterceptor: false (%s)', (_method, lockModule) => {
  useRedis();
  it.each([
    ['express', () => new ExpressAdapter()],
    ['fastify', () => new FastifyAdapter()],
  ])('installs no APP_INTERCEPTOR; @UseInterceptors(LockConflictInterceptor) maps 409 and 503 per controller (%s)', async (_platform, adapter) => {
    @Module({ imports: [lockModule(), OptOutFeatureModule] })
    class OptOutModule {}
    const app = await NestFactory.create(OptOutModule, adapter(), { logger: new CapturedLogs(), forceCloseConnections: true, abortOnError: false });
    const base = await listenOnLoopback(app);
    try {
      const locks = app.get(LockService);
      const held = [await locks.acquire('mapped:1'), await locks.acquire('unmapped:1')];
      const mapped = await fetch(`${base}/mapped/1`, { method: 'POST' });
      expect(mapped.status).toBe(409);
      // The interceptor applied per controller reads the module's options (here: name the key).
      expect(((await mapped.json()) as { message: string }).message).toBe('Lock "mapped:1" is locked by another operation. Try again later.');
      expect((await fetch(`${base}/mapped/unavailable/2`, { method: 'POST' })).status).toBe(503);
      // No global interceptor: a controller without it gets Nest's answer to an unknown error.
      expect((await fetch(`${base}/unmapped/1`, { method: 'POST' })).status).toBe(500);
      for (const lock of held) await lock.release();
      expect((await fetch(`${base}/unmapped/1`, { method: 'POST' })).status).toBe(201);
    } finally {
      await app.close();
    }
  });
});
