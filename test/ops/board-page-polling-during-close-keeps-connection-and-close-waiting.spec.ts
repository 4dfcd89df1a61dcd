import { Agent, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallHandler, CanActivate, ExecutionContext, INestApplication, NestInterceptor, Provider } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { of, tap, type Observable } from 'rxjs';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * An open board page asks for the list every second, on the browser's kept-alive connection. A
 * request in flight as the application closes its HTTP server (Node closes only the connections
 * idle at that moment) left its connection open after its answer, and the page's next poll came
 * on it before the keep-alive timeout: answered each time, the connection never idled, the
 * server never closed, and `app.close()` waited as long as the page stayed open (Express; Fastify
 * refuses requests once closing, after answering one more on that connection). The board now
 * answers every request once its application is closing with `Connection: close`.
 *
 * A review's suspicion (forty-fourth session), confirmed: that header was set by an interceptor of
 * the board's, which runs after the application's global interceptors. One that answers a board
 * request itself (a cache, such as `@nestjs/cache-manager`'s `CacheInterceptor`, often global)
 * answered it without the header, and the page's polls, answered from the cache, held the close
 * again. The header is now set from a middleware, before any guard or interceptor.
 */
const adapters = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const;

/** The page's poll, as often as the board's script makes it (1 s) would take a minute to show; faster here. */
const POLL_MS = 200;
/** Polls past Node's 5 s keep-alive timeout at that pace, had the connection been left to idle. */
const POLLS = 40;

describe.each(adapters)('a board page polling while the application closes (%s)', (_platform, adapter) => {
  useRedis();
  let app: INestApplication | undefined;
  let agent: Agent | undefined;
  afterEach(async () => {
    agent?.destroy();
    await app?.close();
    app = agent = undefined;
  });

  // The list, and the live feed whose EventSource comes back on its own: answered "shut down"
  // (not an empty stream, which Nest sends with Connection: keep-alive and the browser asks again for).
  it.each(['api/locks', 'api/events'])('answers %s in flight with Connection: close, and the close ends while the page polls on', async (route) => {
    await expectCloseToEndWhilePagePolls(route, []);
  });

  it('does so when a global interceptor of the application answers the board\'s requests from its cache', async () => {
    await expectCloseToEndWhilePagePolls('api/locks', [{ provide: APP_INTERCEPTOR, useClass: AnswersGetsFromCache }]);
  });

  async function expectCloseToEndWhilePagePolls(route: string, providers: Provider[]): Promise<void> {
    let reached!: () => void;
    const inGuard = new Promise<void>((resolve) => (reached = resolve));
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    // The application's guard: holds the request marked `x-hold` until the HTTP server is closing.
    const holding: CanActivate = {
      async canActivate(context: ExecutionContext) {
        if (context.switchToHttp().getRequest<{ headers: IncomingHttpHeaders }>().headers['x-hold'] !== undefined) {
          reached();
          await held;
        }
        return true;
      },
    };
    app = await createHttpApp(
      { imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ path: 'admin/locks', guards: [holding] })], providers },
      { adapter: adapter() },
    );
    const base = `${await listenOnLoopback(app)}/admin/locks`;
    const server = app.getHttpServer() as Server;
    // One connection, kept alive, as a browser keeps its connection to the page's origin.
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await get(`${base}/api/locks`, agent);
    expect(first.status).toBe(200);

    const inFlight = get(`${base}/${route}`, agent, { 'x-hold': '1', accept: route === 'api/events' ? 'text/event-stream' : 'application/json' });
    await inGuard;
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    app = undefined;
    await expect.poll(() => server.listening).toBe(false);
    letGo();
    const answer = await inFlight;
    expect(answer.socket).toBe(first.socket);
    expect(answer.headers.connection).toBe('close');
    // The board's 503 (LockService shut down), or the cache's answer of the first request.
    expect(answer.status).toBe(providers.length === 0 ? 503 : 200);
    // A closing application's 503 asks for no wait: a retry can go to another instance at once.
    expect(answer.headers['retry-after']).toBeUndefined();

    let answeredAfterClose = 0;
    for (let polls = 0; polls < POLLS && !closed; polls++) {
      await sleep(POLL_MS);
      if (closed) break;
      const poll = await get(`${base}/api/locks`, agent).catch(() => undefined);
      if (poll !== undefined) answeredAfterClose++;
    }
    expect({ closed, answeredAfterClose }).toEqual({ closed: true, answeredAfterClose: 0 });
    await closing;
  }
});

/** What a global cache interceptor does (`@nestjs/cache-manager`'s `CacheInterceptor`): a GET asked before is answered from its cache, before the route's own interceptors. */
class AnswersGetsFromCache implements NestInterceptor {
  private readonly cache = new Map<string, unknown>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const { method, url } = context.switchToHttp().getRequest<{ method: string; url: string }>();
    if (method !== 'GET' || url.endsWith('/api/events')) return next.handle();
    if (this.cache.has(url)) return of(this.cache.get(url));
    return next.handle().pipe(tap((body) => this.cache.set(url, body)));
  }
}

type Answer = { status: number; headers: IncomingHttpHeaders; socket: unknown };

function get(url: string, agent: Agent, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const asked = request(url, { agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, socket: asked.socket }));
    });
    asked.on('error', reject);
    asked.end();
  });
}
