import {
  BadRequestException,
  Body,
  Controller,
  ForbiddenException,
  Get,
  Header,
  HttpCode,
  HttpException,
  Inject,
  Injectable,
  Post,
  Query,
  Req,
  Res,
  ServiceUnavailableException,
  SetMetadata,
  Sse,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type MessageEvent,
  type Type,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Socket } from 'node:net';
import { filter, map, Subject, takeUntil, type Observable } from 'rxjs';
import { cursorProblem, forceRelease, listLocks, type LockPage } from '../core/stores/redis/lock-admin.js';
import type { LockManager } from '../core/engine/lock-manager.js';
import { checkLockKey } from '../core/keys/lock-key.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { isShutdownReason } from '../errors/shutdown-reason.js';
import { LockService } from '../lock.service.js';
import { LOCK_RUNNER } from '../redis-lock.constants.js';
import { BOARD_CSP, BOARD_CSS, BOARD_JS, boardPage } from './lock-board.assets.js';
import { crossSiteRead, crossSiteRefusal, listQuery, show } from './lock-board.requests.js';
import { hostAllowed } from './lock-board.hosts.js';
import { endFeedNotRead } from './lock-board.feed.js';
import { BoardShutdown } from './lock-board.shutdown.js';
import { setImmediate } from '../core/time/real-timers.js';
import { isUnansweredRead } from '../core/engine/unanswered.js';
import { passes } from '../core/engine/store-failure.js';
import { RedisUnavailableError } from '../errors/redis-unavailable.error.js';
import { setRetryAfter, type HeaderResponse } from '../retry-after.js';

/**
 * How long a board request waits for Redis: a page's scans and inspections, or a release's read
 * and delete, take milliseconds on a healthy Redis (a page scans a bounded number of keys), and
 * each inspection answers within its own second.
 */
const BOARD_READ_BOUND_MS = 5_000;

/** The board's settings after defaults and validation, injected into its controller. */
export interface ResolvedBoardSettings {
  allowForceRelease: boolean;
  pageSize: number;
  /** Lowercased entries, or `undefined` for any host. */
  allowedHosts: readonly string[] | undefined;
}

/** Injection token of the board's `ResolvedBoardSettings` (one per `register()` call, in its module). */
export const BOARD_SETTINGS = Symbol('BOARD_SETTINGS');

/** Express or Fastify request: only what the board reads. */
type RequestLike = {
  method?: string;
  originalUrl?: string;
  url?: string;
  headers?: Record<string, string | string[] | undefined>;
  socket?: Socket;
  raw?: { socket?: Socket };
};

/**
 * Builds the board's controller for one `register()` call: the route, the guards and the
 * `routeMetadata` entries are decorator arguments, so each board gets its own class. `where`
 * names the call in errors.
 */
export function lockBoardController(
  path: string,
  guards: (CanActivate | Type<CanActivate>)[],
  routeMetadata: readonly [string | symbol, unknown][],
  where: string,
): Type<unknown> {
  class LockBoardController {
    /**
     * Ends the live feeds when the application starts closing: Nest closes the HTTP server
     * before the shutdown hooks that complete `events$`, and an open stream would hold it.
     */
    private readonly closing = new Subject<void>();
    /** Connections carrying a live feed: closed at shutdown, since keep-alive would hold the server. */
    private readonly feeds = new Set<Socket>();

    constructor(
      private readonly locks: LockService,
      private readonly options: ResolvedBoardSettings,
      modules: ModuleRef,
      private readonly shutdown: BoardShutdown,
    ) {
      // Made before the routes are: a class guard is checked here, once Nest has made it.
      checkGuardInstances(guards, modules, where);
    }

    async beforeApplicationShutdown(): Promise<void> {
      this.shutdown.close();
      this.closing.next();
      this.closing.complete();
      // Let the streams' last bytes go out before closing their connections.
      await new Promise((resolve) => setImmediate(resolve));
      for (const socket of this.feeds) socket.destroySoon();
      this.feeds.clear();
    }

    page(request: RequestLike): string {
      return boardPage(relativeBase(request.originalUrl ?? request.url ?? '', path));
    }

    script(): string {
      return BOARD_JS;
    }

    style(): string {
      return BOARD_CSS;
    }

    async list(query: unknown, response: HeaderResponse): Promise<LockPage & { allowForceRelease: boolean }> {
      const parsed = listQuery(query);
      if ('problem' in parsed) throw new BadRequestException(parsed.problem);
      const page = await this.untilShutdown('the lock board\'s list', response, async () => {
        const problem = await cursorProblem(this.manager, parsed.cursor);
        if (problem !== undefined) throw new BadRequestException(`Query parameter "cursor" ${problem}`);
        return listLocks(this.manager, parsed.cursor, this.options.pageSize);
      });
      return { ...page, allowForceRelease: this.options.allowForceRelease };
    }

    async release(body: unknown, request: RequestLike, response: HeaderResponse): Promise<{ released: boolean }> {
      if (!this.options.allowForceRelease) {
        throw new ForbiddenException('Releasing locks by force is not enabled on this board (allowForceRelease).');
      }
      const refused = crossSiteRefusal(request.headers ?? {});
      if (refused !== undefined) throw new HttpException(refused.message, refused.status);
      const { key, confirm, holder } = (body ?? {}) as { key?: unknown; confirm?: unknown; holder?: unknown };
      if (typeof key !== 'string' || key.length === 0 || key.length > 1024 || typeof holder !== 'string' || holder.length > 64) {
        throw new BadRequestException('Body must be JSON: { "key": "<lock key>", "confirm": "<the same key>", "holder": "<its holderId in the list>" }.');
      }
      if (confirm !== key) throw new BadRequestException('"confirm" must repeat the key: a release by force must be confirmed.');
      // A key no lock can have (a lone surrogate, say) is a bad request, not a server error.
      try {
        checkLockKey(key);
      } catch (error) {
        throw new BadRequestException(`"key" is not a lock key: ${(error as Error).message}`);
      }
      return { released: await this.untilShutdown('the lock board\'s release', response, () => forceRelease(this.manager, key, holder)) };
    }

    /**
     * The board's own reads of Redis (SCAN, INFO, the owner before a release) end with the lock
     * service's first shutdown phase, as `inspect()` does: Nest closes the HTTP server before the
     * Redis connection, and a request waiting on a frozen Redis would hold `app.close()`. And
     * within `BOARD_READ_BOUND_MS`, so that an open tab's request does not hang for as long as
     * Redis does not answer (a client without a command timeout waits for ever). Such a request
     * gets 503. One that comes once the lock service has shut down is refused before its work
     * starts: its commands would go out on a client handed in that its owner closes next, and a
     * release by force would go on after its request was answered. `response`: the request's, for
     * a `Retry-After`.
     */
    private async untilShutdown<T>(what: string, response: HeaderResponse, work: () => Promise<T>): Promise<T> {
      if (this.manager.closing.aborted) throw new ServiceUnavailableException(`${what}: LockService is shut down (the application is closing); Redis is no longer asked.`);
      try {
        return await this.manager.untilShutdown(work(), what, undefined, BOARD_READ_BOUND_MS);
      } catch (error) {
        // The application closing: 503 without Retry-After, as the interceptor's (a retry can go
        // to another instance at once).
        if (isShutdownReason(error)) throw new ServiceUnavailableException((error as Error).message);
        // Redis unavailable for now (no answer, or none to ask: down while the client fails fast,
        // a failover's READONLY), as the lock calls' RedisUnavailableError is: 503, not a 500 and
        // an error log per poll of an open tab, with the interceptor's Retry-After. The board's
        // own reads (SCAN, INFO) fail raw.
        if (isUnansweredRead(error) || error instanceof RedisUnavailableError || passes(error)) {
          setRetryAfter(response);
          throw new ServiceUnavailableException((error as Error).message);
        }
        throw error;
      }
    }

    events(request: RequestLike): Observable<MessageEvent> {
      // Refused, not an empty stream: Nest sends a stream with Connection: keep-alive, and the
      // page's EventSource would ask again on that connection (see BoardShutdown).
      if (this.shutdown.closing) throw new ServiceUnavailableException('The application is shutting down: its lock board\'s live feed has ended.');
      const socket = request.socket ?? request.raw?.socket;
      if (socket) {
        this.feeds.add(socket);
        socket.once('close', () => this.feeds.delete(socket));
      }
      return this.locks.events$.pipe(
        takeUntil(this.closing),
        // A process holding thousands of locks renews thousands a second: not worth a feed line.
        filter((event) => event.type !== 'renewed'),
        endFeedNotRead(socket),
        map((event): MessageEvent => ({ data: event, type: 'message' })),
      );
    }

    private get manager(): LockManager {
      return this.locks[LOCK_RUNNER] as LockManager;
    }
  }

  const method = (name: keyof LockBoardController, ...decorators: MethodDecorator[]): void => {
    const descriptor = Object.getOwnPropertyDescriptor(LockBoardController.prototype, name)!;
    for (const decorator of decorators.reverse()) decorator(LockBoardController.prototype, name, descriptor);
    Object.defineProperty(LockBoardController.prototype, name, descriptor);
  };
  const secured = [Header('Cache-Control', 'no-store'), Header('X-Content-Type-Options', 'nosniff')];
  method('page', Get(), Header('Content-Type', 'text/html; charset=utf-8'), Header('Content-Security-Policy', BOARD_CSP), ...secured);
  Req()(LockBoardController.prototype, 'page', 0);
  method('script', Get('board.js'), Header('Content-Type', 'text/javascript; charset=utf-8'), ...secured);
  method('style', Get('board.css'), Header('Content-Type', 'text/css; charset=utf-8'), ...secured);
  method('list', Get('api/locks'), ...secured);
  Query()(LockBoardController.prototype, 'list', 0);
  // Passthrough: the route still answers with what it returns; the response is only for a Retry-After.
  Res({ passthrough: true })(LockBoardController.prototype, 'list', 1);
  method('release', Post('api/locks/release'), HttpCode(200), ...secured);
  Body()(LockBoardController.prototype, 'release', 0);
  Req()(LockBoardController.prototype, 'release', 1);
  Res({ passthrough: true })(LockBoardController.prototype, 'release', 2);
  method('events', Sse('api/events'));
  Req()(LockBoardController.prototype, 'events', 0);
  Reflect.defineMetadata('design:paramtypes', [LockService, Object, ModuleRef, BoardShutdown], LockBoardController);
  Inject(BOARD_SETTINGS)(LockBoardController, undefined, 1);
  Controller(path)(LockBoardController);
  // The host and site checks first: a rebound or cross-site page's request ends there, before any guard of the application.
  UseGuards(BoardHostGuard, BoardSiteGuard, ...guards)(LockBoardController);
  setRouteMetadata(LockBoardController, routeMetadata, where);
  return LockBoardController;
}

/** How an error names one key of `routeMetadata`. */
export function routeMetadataName(key: string | symbol): string {
  return typeof key === 'symbol' ? `routeMetadata[${String(key)}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `routeMetadata.${key}` : `routeMetadata[${JSON.stringify(key)}]`;
}

/**
 * Sets each `routeMetadata` entry on the controller and on each route handler, as `@SetMetadata()`
 * would on both: a guard may read either (`getAllAndOverride(key, [handler, class])`, or
 * `get(key, handler)` as the Nest docs' `Reflector.createDecorator()` example does). A key that
 * Nest (or the board) already set on the routes (`path`, `method`, `__guards__`...), or that Nest
 * reads there (`host`, its `__name__` keys), is refused: it would change how the routes are served.
 */
function setRouteMetadata(controller: Type<unknown>, routeMetadata: readonly [string | symbol, unknown][], where: string): void {
  // Every route handler: the methods Nest's route decorators gave a path (read off the
  // descriptors: a getter must not run on the prototype).
  const routes = Object.entries(Object.getOwnPropertyDescriptors(controller.prototype)).filter(
    ([name, descriptor]) => name !== 'constructor' && typeof descriptor.value === 'function' && Reflect.hasOwnMetadata('path', descriptor.value as object),
  );
  const targets: object[] = [controller, ...routes.map(([, descriptor]) => descriptor.value as object)];
  for (const [key, value] of routeMetadata) {
    const nests = key === 'host' || (typeof key === 'string' && /^__.+__$/.test(key)) || targets.some((target) => Reflect.hasOwnMetadata(key, target));
    if (nests) throw new InvalidLockOptionsError(routeMetadataName(key), value, 'under a key of your own: Nest (or the board) uses this one on the board\'s routes').within(where);
    SetMetadata(key as string, value)(controller);
    for (const [name, descriptor] of routes) SetMetadata(key as string, value)(controller.prototype, name, descriptor);
  }
}

/**
 * Refuses a class in `guards` whose instance (as Nest made it, in the board's module) has no
 * `canActivate()`: a Passport strategy put there by mistake, a misspelt method, `AuthGuard` from
 * `@nestjs/passport` given uncalled (`new AuthGuard()` makes a guard class, not a guard). Early
 * Nest 11 releases (11.0.0) drop such a guard without a word, which served the board to anyone;
 * later ones refuse it with an error that names neither the board nor the option. A request- or
 * transient-scoped guard has no instance yet, and is left to Nest.
 */
function checkGuardInstances(guards: readonly unknown[], modules: ModuleRef, where: string): void {
  guards.forEach((guard, i) => {
    if (typeof guard !== 'function') return; // an object: checked for canActivate() with the options
    let instance: unknown;
    try {
      instance = modules.get(guard as Type<unknown>, { strict: true });
    } catch {
      return; // scoped, or not made in this module: Nest's own rules apply
    }
    // The instance's own: Nest 11 never runs a class's static canActivate() either.
    if (typeof (instance as { canActivate?: unknown } | null | undefined)?.canActivate === 'function') return;
    throw new InvalidLockOptionsError(
      `guards[${i}]`,
      guard,
      'a guard: a class whose instances have canActivate() (is it a strategy, a misspelt method, or a guard factory such as AuthGuard given uncalled, where AuthGuard("jwt") is meant?)',
    ).within(where);
  });
}

/** Refuses a request for a host not in `allowedHosts` (see `LockBoardSettings.allowedHosts`). */
@Injectable()
class BoardHostGuard implements CanActivate {
  constructor(@Inject(BOARD_SETTINGS) private readonly settings: ResolvedBoardSettings) {}

  canActivate(context: ExecutionContext): boolean {
    const { allowedHosts } = this.settings;
    if (allowedHosts === undefined) return true;
    const headers = context.switchToHttp().getRequest<RequestLike>().headers;
    // HTTP/2 names the host in `:authority`; browsers send no `Host` there.
    const host = headers?.host ?? headers?.[':authority'];
    if (hostAllowed(host, allowedHosts)) return true;
    // Behind a proxy that rewrites Host (nginx's default, Apache without ProxyPreserveHost) every
    // request carries the upstream's name: listing it would let a rebound request through the
    // proxy too, so the answer points at the proxy. X-Forwarded-Host is only named, never trusted:
    // a page served under the board's own name (a rebound one) sets it as it likes.
    const forwarded = headers?.['x-forwarded-host'];
    const proxied = typeof forwarded === 'string' && forwarded !== host ? ` It came through a proxy for X-Forwarded-Host: ${shown(forwarded)}.` : '';
    throw new ForbiddenException(
      `Refused: the lock board is not served under this host (Host: ${shown(host)}).${proxied} List the names it is served under in "allowedHosts"; ` +
        'behind a reverse proxy, have it pass the browser\'s Host on (nginx: proxy_set_header Host $host) instead of listing the upstream name.',
    );
  }
}

/** A header's value as `show` gives it (`none` when absent). */
function shown(value: string | string[] | undefined): string {
  return typeof value === 'string' ? show(value) : 'none';
}

/** Refuses a read a page of another site makes (see `crossSiteRead`). */
@Injectable()
class BoardSiteGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<RequestLike>();
    const refused = crossSiteRead(request.method, request.headers ?? {});
    if (refused !== undefined) throw new HttpException(refused.message, refused.status);
    return true;
  }
}

/**
 * Where the page's links point, relative to the page itself, never from the request's path
 * (which a duplicate slash makes `//host/...`, a protocol-relative URL): `.` when the page was
 * asked with a trailing slash, else `./<its last segment>`.
 */
function relativeBase(url: string, path: string): string {
  const pathname = url.split(/[?#]/)[0]!;
  if (pathname.endsWith('/')) return '.';
  const segment = pathname.slice(pathname.lastIndexOf('/') + 1);
  if (/^[A-Za-z0-9_~%-][A-Za-z0-9._~%-]*$/.test(segment)) return `./${segment}`;
  // A segment that is odd (".." and the like): the configured path's, which was checked.
  const configured = path.split('/').filter(Boolean).pop();
  return configured === undefined ? '.' : `./${configured}`;
}
