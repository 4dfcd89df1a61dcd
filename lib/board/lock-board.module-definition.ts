import { ConfigurableModuleBuilder, Logger, type DynamicModule, type Provider } from '@nestjs/common';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import type { LockBoardOptions, LockBoardSettings } from './lock-board-options.interface.js';
import { BoardShutdown } from './lock-board.shutdown.js';
import { BOARD_SETTINGS, lockBoardController, routeMetadataName, type ResolvedBoardSettings } from './lock-board.controller.js';
import { allowedHostProblem } from './lock-board.hosts.js';

/** Injection token of a board's controller class (one per `register()` call, in its module): its routes get the board's middleware. */
export const BOARD_ROUTES = Symbol('BOARD_ROUTES');

type RouteExtras = Required<Pick<LockBoardOptions, 'path' | 'guards' | 'imports'>> & Pick<LockBoardOptions, 'routeMetadata'>;

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: LOCK_BOARD_OPTIONS } = new ConfigurableModuleBuilder<LockBoardSettings>({ moduleName: 'RedisLockBoard' })
  .setClassMethodName('register')
  // Every extra is named here, `routeMetadata` too: the builder leaves out of the settings only the names it lists.
  .setExtras<RouteExtras>({ path: 'locks', guards: [], imports: [], routeMetadata: undefined }, (definition, extras) => boardDefinition(definition, extras))
  .build();

/**
 * Adds the routes (a controller class of their own, since path and guards are decorator
 * arguments) and the checked settings to what the builder made of `register()` or
 * `registerAsync()`.
 */
function boardDefinition(definition: DynamicModule, { path, guards, imports, routeMetadata }: RouteExtras): DynamicModule {
  // The builder gives `imports` to the definition of registerAsync() only.
  const async = definition.imports !== undefined;
  const where = `RedisLockBoardModule.${async ? 'registerAsync' : 'register'}`;
  if (typeof path !== 'string' || !/^[A-Za-z0-9/_.~-]*$/.test(path)) {
    throw new InvalidLockOptionsError('path', path, 'a route path of letters, digits and / _ . ~ -').within(where);
  }
  if (!Array.isArray(guards)) throw new InvalidLockOptionsError('guards', guards, 'an array of guards').within(where);
  // Nest would refuse one inside its own @UseGuards(), naming a class the application never wrote
  // (an `undefined` is what a circular import makes of a guard class).
  guards.forEach((guard: unknown, i) => {
    const isGuard = typeof guard === 'function' || (typeof guard === 'object' && guard !== null && typeof (guard as { canActivate?: unknown }).canActivate === 'function');
    if (!isGuard) throw new InvalidLockOptionsError(`guards[${i}]`, guard, 'a guard: a class, or an object with canActivate() (undefined here is often a circular import)').within(where);
  });
  if (!Array.isArray(imports)) throw new InvalidLockOptionsError('imports', imports, 'an array of modules').within(where);
  const metadata = routeMetadata === undefined ? [] : checkRouteMetadata(routeMetadata, where);
  const settings: Provider = {
    provide: BOARD_SETTINGS,
    useFactory: (options: LockBoardSettings) => {
      const settings = checkSettings(options, guards, where);
      // A rebound page reads what the board shows as well as it releases: both need the warning.
      if (guards.length === 0 && settings.allowWithoutGuards && settings.allowedHosts === undefined) {
        const does = settings.allowForceRelease ? 'releases locks by force' : 'shows the lock keys, labels, hosts and pids';
        new Logger('RedisLockBoard').warn(
          `The lock board at /${path} ${does} without guards of its own and answers any host: a private network does not stop a page ` +
            'of another site that reaches it by DNS rebinding. Set "allowedHosts" to the host names it is served under, or give it a guard that authenticates the caller.',
        );
      }
      return settings;
    },
    inject: [LOCK_BOARD_OPTIONS],
  };
  const controller = lockBoardController(path, guards, metadata, where);
  return {
    ...definition,
    imports: [...(definition.imports ?? []), ...(async ? [] : imports)],
    providers: [...(definition.providers ?? []), settings, BoardShutdown, { provide: BOARD_ROUTES, useValue: controller }],
    controllers: [controller],
  };
}

/**
 * The entries of `routeMetadata`, checked: a plain object with at least one key (string or
 * symbol), none of whose values is `undefined`. Which keys Nest already uses on the board's
 * routes is checked where they are set (`lockBoardController`).
 */
function checkRouteMetadata(routeMetadata: unknown, where: string): [string | symbol, unknown][] {
  const prototype = typeof routeMetadata === 'object' && routeMetadata !== null ? Object.getPrototypeOf(routeMetadata) : undefined;
  // A Map (or an array) would set nothing a guard reads, which a RolesGuard takes as "anyone".
  if (prototype !== Object.prototype && prototype !== null) {
    throw new InvalidLockOptionsError('routeMetadata', routeMetadata, 'a plain object of metadata keys and values, such as { roles: ["admin"] }').within(where);
  }
  const keys = Reflect.ownKeys(routeMetadata as object);
  if (keys.length === 0) throw new InvalidLockOptionsError('routeMetadata', routeMetadata, 'an object with at least one key (leave it out for none)').within(where);
  return keys.map((key) => {
    const value = (routeMetadata as Record<string | symbol, unknown>)[key];
    if (value === undefined) {
      throw new InvalidLockOptionsError(
        routeMetadataName(key),
        value,
        'a value: undefined reads as no metadata, which a guard such as the Nest docs\' RolesGuard takes as a route open to anyone',
      ).within(where);
    }
    return [key, value];
  });
}

/** The names of the settings (what a `registerAsync()` factory returns), and of the options that shape the routes. */
export const SETTING_NAMES = ['allowForceRelease', 'allowWithoutGuards', 'pageSize', 'allowedHosts'] as const satisfies readonly (keyof LockBoardSettings)[];
export const ROUTE_OPTION_NAMES = ['path', 'guards', 'routeMetadata', 'imports'] as const;
const SETTINGS = new Set<string>(SETTING_NAMES);
const ROUTE_EXTRAS = new Set<string>(ROUTE_OPTION_NAMES);

/** Validates the settings, throwing `InvalidLockOptionsError` (which stops the application's startup). */
export function checkSettings(options: LockBoardSettings, guards: unknown, where: string): ResolvedBoardSettings & { allowWithoutGuards: boolean } {
  const guarded = Array.isArray(guards) && guards.length > 0;
  if (options === null || typeof options !== 'object') throw new InvalidLockOptionsError('options', options, 'an object').within(where);
  // Dropped without a word, a name would leave the board other than meant: `guards` returned by
  // a factory served it unguarded (the routes are made before the factory runs).
  for (const name of Object.keys(options)) {
    // register() hands its route extras on with the settings (they were checked above).
    if (SETTINGS.has(name) || (ROUTE_EXTRAS.has(name) && !where.endsWith('registerAsync'))) continue;
    const value = (options as Record<string, unknown>)[name];
    if (ROUTE_EXTRAS.has(name)) throw new InvalidLockOptionsError(name, value, 'given beside useFactory in registerAsync(), not returned by the factory (it shapes the routes, which are made before the factory runs)').within(where);
    throw new InvalidLockOptionsError(name, value, `left out: it is no option of the board (its options are ${[...ROUTE_EXTRAS, ...SETTINGS].join(', ')})`).within(where);
  }
  const { allowForceRelease = false, allowWithoutGuards = false, pageSize = 50, allowedHosts } = options;
  if (typeof allowForceRelease !== 'boolean') throw new InvalidLockOptionsError('allowForceRelease', allowForceRelease, 'a boolean').within(where);
  if (typeof allowWithoutGuards !== 'boolean') throw new InvalidLockOptionsError('allowWithoutGuards', allowWithoutGuards, 'a boolean').within(where);
  if (typeof pageSize !== 'number' || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 200) {
    throw new InvalidLockOptionsError('pageSize', pageSize, 'an integer from 1 to 200').within(where);
  }
  if (allowedHosts !== undefined) {
    if (!Array.isArray(allowedHosts) || allowedHosts.length === 0) {
      throw new InvalidLockOptionsError('allowedHosts', allowedHosts, 'a non-empty array of host names (leave it out to answer any host)').within(where);
    }
    for (const [index, entry] of allowedHosts.entries()) {
      const problem = allowedHostProblem(entry);
      if (problem !== undefined) throw new InvalidLockOptionsError(`allowedHosts[${index}]`, entry, problem).within(where);
    }
  }
  if (allowForceRelease && !guarded && !allowWithoutGuards) {
    throw new InvalidLockOptionsError(
      'allowForceRelease',
      allowForceRelease,
      'false on a board without guards, where anyone who reaches the application could release locks: pass "guards" (your admin guard), ' +
        'or set "allowWithoutGuards: true" if a global guard (APP_GUARD) or a private network already protects the board',
    ).within(where);
  }
  // Forgotten, or left empty by a configuration, guards would serve every lock's key, label, host
  // and pid (and the live feed) to whoever reaches the application: that must be said on purpose.
  if (!guarded && !allowWithoutGuards) {
    throw new InvalidLockOptionsError(
      'guards',
      guards,
      'at least one guard (your admin guard) on a board: it shows every lock\'s key, label, host and pid to whoever reaches it. ' +
        'If a global guard (APP_GUARD) or a private network already protects the board, say so with "allowWithoutGuards: true" (and set "allowedHosts")',
    ).within(where);
  }
  return { allowForceRelease, allowWithoutGuards, pageSize, allowedHosts: allowedHosts?.map((entry) => entry.toLowerCase()) };
}
