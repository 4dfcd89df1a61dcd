/**
 * Found by review (thirty-fourth session): the board requires `guards`, and the guard most Nest
 * applications have for admin pages is the `RolesGuard` of the Nest docs (security/authorization):
 * it reads `@Roles()` metadata with the Reflector and returns true for a route that has none. The
 * board's routes carry no metadata of the application's, so `guards: [RolesGuard]` (or the same
 * guard as `APP_GUARD`, with `allowWithoutGuards`) let anyone read every lock and, with
 * `allowForceRelease`, release one by force with a plain curl: the startup checks were satisfied,
 * and nothing said so. The board has no `@Roles()` for the application to put on its routes; it
 * takes `routeMetadata` now, set on its controller and on each of its handlers as `@SetMetadata()`
 * would, and the docs say so where they describe `guards`.
 */
import { Injectable, type CanActivate, type ExecutionContext, type INestApplication, type Provider } from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule, type LockBoardAsyncOptions, type LockBoardOptions } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// The Nest docs' roles, as an application copies them.
enum Role {
  User = 'user',
  Admin = 'admin',
}
// The docs' @Roles(...roles) is SetMetadata(ROLES_KEY, roles): what routeMetadata sets on the board's routes.
const ROLES_KEY = 'roles';

type Request = { headers: Record<string, string | undefined>; user?: { roles: string[] } };

/** Stands in for the application's authentication: the caller's roles from a header (none: anonymous). */
@Injectable()
class SessionGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    request.user = { roles: request.headers['x-roles']?.split(',') ?? [] };
    return true;
  }
}

/** The Nest docs' RolesGuard, word for word but for the types. */
@Injectable()
class RolesGuard implements CanActivate {
  constructor(private reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const requiredRoles = this.reflector.getAllAndOverride<Role[]>(ROLES_KEY, [context.getHandler(), context.getClass()]);
    if (!requiredRoles) {
      return true;
    }
    const { user } = context.switchToHttp().getRequest<Request>();
    return requiredRoles.some((role) => user!.roles?.includes(role));
  }
}

/** The docs' other form: a decorator made by the Reflector, read from the handler only. */
const RequiredRoles = Reflector.createDecorator<string[]>();

@Injectable()
class HandlerRolesGuard implements CanActivate {
  constructor(private reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const roles = this.reflector.get(RequiredRoles, context.getHandler());
    if (!roles) return true;
    const roleHeader = context.switchToHttp().getRequest<Request>().headers['x-roles'];
    return roles.some((role) => roleHeader?.split(',').includes(role));
  }
}

const adapters = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const;

const RELEASE_HEADERS = { 'content-type': 'application/json', 'x-lock-board': '1' };

describe.each(adapters)('a lock board behind the Nest docs\' RolesGuard on %s', (_platform, adapter) => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(board: ReturnType<typeof RedisLockBoardModule.register>, providers: Provider[] = []): Promise<string> {
    app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), board], providers }, { adapter: adapter() });
    return `${await listenOnLoopback(app)}/locks`;
  }

  /** Every route's status for a caller with `roles` (none: anonymous); the release last, of `key`. */
  async function statuses(url: string, roles: string | undefined, key: string): Promise<Record<string, number>> {
    const headers: Record<string, string> = roles === undefined ? {} : { 'x-roles': roles };
    const seen: Record<string, number> = {};
    for (const path of ['', '/board.js', '/board.css', '/api/locks', '/api/events']) {
      const response = await fetch(`${url}${path}`, { headers });
      seen[path || '/'] = response.status;
      await response.body?.cancel();
    }
    const listed = roles === undefined ? undefined : await (await fetch(`${url}/api/locks`, { headers })).json().catch(() => undefined);
    const holder = (listed as { locks?: { holderId: string }[] } | undefined)?.locks?.[0]?.holderId ?? 'unknown';
    const release = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: { ...headers, ...RELEASE_HEADERS }, body: JSON.stringify({ key, confirm: key, holder }) });
    seen.release = release.status;
    return seen;
  }

  const refusedEverywhere = { '/': 403, '/board.js': 403, '/board.css': 403, '/api/locks': 403, '/api/events': 403, release: 403 };
  const servedEverywhere = { '/': 200, '/board.js': 200, '/board.css': 200, '/api/locks': 200, '/api/events': 200, release: 200 };

  it('without routeMetadata, lets an anonymous caller list the locks (what the docs now warn of)', async () => {
    const url = await start(RedisLockBoardModule.register({ guards: [SessionGuard, RolesGuard] }));
    await app!.get(LockService).acquire('payroll:emp-1234');
    const anonymous = await fetch(`${url}/api/locks`);
    expect(anonymous.status).toBe(200);
    expect(JSON.stringify(await anonymous.json())).toContain('payroll:emp-1234');
  });

  it('with routeMetadata { roles: ["admin"] }, refuses anonymous and non-admin callers on every route and serves an admin', async () => {
    const url = await start(RedisLockBoardModule.register({ guards: [SessionGuard, RolesGuard], routeMetadata: { [ROLES_KEY]: [Role.Admin] }, allowForceRelease: true }));
    await app!.get(LockService).acquire('payroll:emp-1234');
    expect(await statuses(url, undefined, 'payroll:emp-1234')).toEqual(refusedEverywhere);
    expect(await statuses(url, Role.User, 'payroll:emp-1234')).toEqual(refusedEverywhere);
    expect(await redis.exists('lock:{payroll:emp-1234}')).toBe(1);
    expect(await statuses(url, `${Role.User},${Role.Admin}`, 'payroll:emp-1234')).toEqual(servedEverywhere);
    expect(await redis.exists('lock:{payroll:emp-1234}')).toBe(0);
  });

  it('with routeMetadata beside registerAsync()\'s factory, and with the RolesGuard as APP_GUARD', async () => {
    const asyncBoard: LockBoardAsyncOptions = { guards: [SessionGuard, RolesGuard], routeMetadata: { roles: ['admin'] }, useFactory: () => ({ allowForceRelease: true }) };
    let url = await start(RedisLockBoardModule.registerAsync(asyncBoard));
    await app!.get(LockService).acquire('async:1');
    expect(await statuses(url, undefined, 'async:1')).toEqual(refusedEverywhere);
    expect(await statuses(url, 'admin', 'async:1')).toEqual(servedEverywhere);
    await app!.close();

    // The global form: the application's guards run on every route, the board's included.
    const global: Provider[] = [
      { provide: APP_GUARD, useClass: SessionGuard },
      { provide: APP_GUARD, useClass: RolesGuard },
    ];
    url = await start(RedisLockBoardModule.register({ allowWithoutGuards: true, allowedHosts: ['127.0.0.1'], routeMetadata: { roles: ['admin'] }, allowForceRelease: true }), global);
    await app!.get(LockService).acquire('global:1');
    expect(await statuses(url, undefined, 'global:1')).toEqual(refusedEverywhere);
    expect(await statuses(url, 'admin', 'global:1')).toEqual(servedEverywhere);
  });

  it('with a Reflector.createDecorator() key, read from the handler alone', async () => {
    const url = await start(RedisLockBoardModule.register({ guards: [HandlerRolesGuard], routeMetadata: { [RequiredRoles.KEY]: ['admin'] }, allowForceRelease: true }));
    await app!.get(LockService).acquire('handler:1');
    expect(await statuses(url, undefined, 'handler:1')).toEqual(refusedEverywhere);
    expect(await statuses(url, 'admin', 'handler:1')).toEqual(servedEverywhere);
  });
});

describe('lock board routeMetadata options', () => {
  const guards = [RolesGuard];

  it.each([
    [[['admin']], 'routeMetadata'],
    [new Map([['roles', ['admin']]]), 'routeMetadata'],
    ['roles', 'routeMetadata'],
    [{}, 'routeMetadata'],
    [{ roles: undefined }, 'routeMetadata.roles'],
    [{ [Symbol('roles')]: undefined }, 'routeMetadata[Symbol(roles)]'],
    [{ path: 'admin' }, 'routeMetadata.path'],
    [{ __guards__: [] }, 'routeMetadata.__guards__'],
    [{ __interceptors__: [] }, 'routeMetadata.__interceptors__'],
    [{ host: 'admin.internal' }, 'routeMetadata.host'],
    [{ 'design:paramtypes': [] }, 'routeMetadata["design:paramtypes"]'],
  ])('refuses %o at register() and registerAsync(), naming %s', (routeMetadata, option) => {
    for (const [where, call] of [
      ['register', () => RedisLockBoardModule.register({ guards, routeMetadata } as LockBoardOptions)],
      ['registerAsync', () => RedisLockBoardModule.registerAsync({ guards, routeMetadata, useFactory: () => ({}) } as LockBoardAsyncOptions)],
    ] as const) {
      expect(call).toThrow(InvalidLockOptionsError);
      expect(call).toThrow(`RedisLockBoardModule.${where}: Option "${option}"`);
    }
  });

  it('refuses routeMetadata returned by a registerAsync() factory at startup, naming it', async () => {
    const compiling = Test.createTestingModule({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
        RedisLockBoardModule.registerAsync({ guards, useFactory: () => ({ routeMetadata: { roles: ['admin'] } }) as never }),
      ],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await expect(compiling).rejects.toThrow('RedisLockBoardModule.registerAsync: Option "routeMetadata" must be given beside useFactory');
  });
});
