import type { CanActivate, ConfigurableModuleAsyncOptions, DynamicModule, ForwardReference, Type } from '@nestjs/common';

/**
 * What the board does: the options `registerAsync()`'s factory returns (and `register()` takes
 * beside the route options).
 */
export interface LockBoardSettings {
  /**
   * Shows a "Release by force" button (with a confirmation) and accepts the release request,
   * which must be a same-origin JSON request carrying the board's own header (see docs/observability.md).
   * Each forced release is emitted as a `force-released` event. Default `false`: read-only.
   * Refused at startup on a board without `guards` unless `allowWithoutGuards` is set.
   */
  allowForceRelease?: boolean;
  /**
   * Says that the board may run without `guards` of its own: a global guard (`APP_GUARD`) or a
   * private network already keeps strangers out. Without it, a board without guards is refused
   * at startup (it would show every lock to whoever reaches the application), and so is
   * `allowForceRelease` without guards. Default `false`.
   */
  allowWithoutGuards?: boolean;
  /** Locks per page (1 to 200). Default 50. */
  pageSize?: number;
  /**
   * The host names the board is served under (the request's `Host` header, port ignored):
   * `"admin.example.com"`, `".example.com"` for a domain and every name under it, `"localhost"`,
   * `"[::1]"`. A request for any other host is refused with 403 on every route of the board,
   * before `guards` run: the one check that stops a page of another site which reached the board
   * by DNS rebinding (its requests carry its own host name, which matches its own `Origin`).
   * Default: any host. Set it on a board that relies on a private network rather than on guards
   * that authenticate the caller.
   */
  allowedHosts?: readonly string[];
}

/** What shapes the board's routes: given directly, to `register()` and to `registerAsync()` alike. */
export interface LockBoardRouteOptions {
  /** Route of the page (under the app's global prefix). Default `locks`. */
  path?: string;
  /**
   * Guards protecting every route of the board, as with `@UseGuards()`: the board shows who
   * holds what, so protect it like any admin page. Required (at least one) unless
   * `allowWithoutGuards` is set. Class guards are created in the board's module: list what they
   * inject under `imports`.
   *
   * A guard that reads route metadata, such as the `RolesGuard` of the Nest docs (it lets a route
   * without `@Roles()` through), admits everyone here: the board's routes carry no metadata of
   * yours. Give the metadata it reads in `routeMetadata`, or use a guard that requires a role
   * by itself.
   */
  guards?: (CanActivate | Type<CanActivate>)[];
  /**
   * Metadata set on every route of the board (page, script, style, list, live feed, release), as
   * `@SetMetadata(key, value)` on its controller and on each of its handlers would: what a guard
   * reading route metadata needs to protect the board, the application's `guards` or a global
   * one (`APP_GUARD`, with `allowWithoutGuards`). A key made by `Reflector.createDecorator()` is
   * its `KEY`. A value may not be `undefined` (a guard would read no metadata, which the Nest
   * docs' `RolesGuard` takes as "anyone"), nor a key one that Nest (or the board) already sets
   * on the board's routes.
   *
   * @example
   * ```ts
   * // The Nest docs' RolesGuard reads `roles` with reflector.getAllAndOverride(ROLES_KEY, [handler, class]).
   * RedisLockBoardModule.register({ guards: [RolesGuard], routeMetadata: { [ROLES_KEY]: [Role.Admin] } });
   * ```
   */
  routeMetadata?: { readonly [key: string | symbol]: unknown };
}

/** Options of `RedisLockBoardModule.register()`. */
export interface LockBoardOptions extends LockBoardSettings, LockBoardRouteOptions {
  /** Modules the guards need. */
  imports?: (Type<unknown> | DynamicModule | Promise<DynamicModule> | ForwardReference)[];
}

/**
 * Options of `RedisLockBoardModule.registerAsync()`: `path`, `guards` and `routeMetadata` directly (they shape
 * the routes, which exist before any provider), the settings from `useFactory` (with `inject`
 * and `imports`), `useClass` or `useExisting` (a class with `create(): LockBoardSettings`).
 */
export interface LockBoardAsyncOptions extends ConfigurableModuleAsyncOptions<LockBoardSettings>, LockBoardRouteOptions {}
