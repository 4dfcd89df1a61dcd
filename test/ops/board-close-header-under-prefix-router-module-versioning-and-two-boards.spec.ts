import { Agent, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { VersioningType, type CanActivate, type DynamicModule, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review suspicion (a92ae4d), cleared: since the board's `Connection: close` during the close is
 * set from a middleware bound to the board's controller (`forRoutes`), not from an interceptor
 * that ran wherever the route was, a board whose routes Nest moves (a global prefix, a
 * `RouterModule` path, URI versioning) or a second board might be left without it, and an open
 * page's polls would hold `app.close()` again. Nest maps the middleware to the moved routes on
 * both adapters: a request in flight as the close begins is answered with `Connection: close`
 * on every board. Fails with the board's `configure()` emptied.
 */
const adapters = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const;

interface Routing {
  /** The board modules the application imports, and what else routes them. */
  imports(guard: CanActivate): DynamicModule[];
  /** Set on the application before it listens. */
  configure?(app: INestApplication): void;
  /** Each board's list route, as Nest serves it. */
  lists: string[];
}

const board = (path: string, guard: CanActivate): DynamicModule => RedisLockBoardModule.register({ path, guards: [guard] });

const routings: Record<string, Routing> = {
  'a global prefix': { imports: (guard) => [board('admin/locks', guard)], configure: (app) => app.setGlobalPrefix('api/v2'), lists: ['api/v2/admin/locks/api/locks'] },
  'URI versioning': { imports: (guard) => [board('admin/locks', guard)], configure: (app) => app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' }), lists: ['v1/admin/locks/api/locks'] },
  'a RouterModule path': {
    imports: (guard) => [board('locks', guard), RouterModule.register([{ path: 'ops', module: RedisLockBoardModule }])],
    lists: ['ops/locks/api/locks'],
  },
  'two boards': { imports: (guard) => [board('a/locks', guard), board('b/locks', guard)], lists: ['a/locks/api/locks', 'b/locks/api/locks'] },
};

describe.each(adapters)('a board request in flight as the application closes (%s)', (_platform, adapter) => {
  useRedis();
  let app: INestApplication | undefined;
  let closing: Promise<void> | undefined;
  const agents: Agent[] = [];
  afterEach(async () => {
    // Their connections gone, a close waiting for them ends.
    for (const agent of agents.splice(0)) agent.destroy();
    await (closing ?? app?.close());
    app = closing = undefined;
  });

  for (const [name, routing] of Object.entries(routings)) {
    it(`is answered with Connection: close under ${name}`, async () => {
      let letGo!: () => void;
      const held = new Promise<void>((resolve) => (letGo = resolve));
      const reached: string[] = [];
      // The application's guard: holds the requests marked `x-hold` until the close began.
      const holding: CanActivate = {
        async canActivate(context: ExecutionContext) {
          const { headers, url } = context.switchToHttp().getRequest<{ headers: IncomingHttpHeaders; url: string }>();
          if (headers['x-hold'] !== undefined) {
            reached.push(url);
            await held;
          }
          return true;
        },
      };
      app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), ...routing.imports(holding)] }, { adapter: adapter() });
      routing.configure?.(app);
      const base = await listenOnLoopback(app);
      const server = app.getHttpServer() as Server;
      const inFlight = routing.lists.map((list) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        agents.push(agent);
        return get(`${base}/${list}`, agent, { 'x-hold': '1' });
      });
      await expect.poll(() => reached.length).toBe(routing.lists.length);
      closing = app.close();
      app = undefined;
      // The board's shutdown hook has run once the HTTP server stopped listening.
      await expect.poll(() => server.listening).toBe(false);
      letGo();
      const answers = await Promise.all(inFlight);
      // Each reached the board (its 503: LockService shut down), and closes its connection.
      expect(answers.map(({ status, headers }) => ({ status, connection: headers.connection }))).toEqual(routing.lists.map(() => ({ status: 503, connection: 'close' })));
    });
  }
});

function get(url: string, agent: Agent, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const asked = request(url, { agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers }));
    });
    asked.on('error', reject);
    asked.end();
  });
}
