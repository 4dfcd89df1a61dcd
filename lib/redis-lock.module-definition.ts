import { ConfigurableModuleBuilder, type DynamicModule, type Provider } from '@nestjs/common';
import { InvalidLockOptionsError } from './errors/invalid-lock-options.error.js';
import { RedisLockError } from './errors/redis-lock.error.js';
import { quoteText } from './core/keys/quote-key.js';
import { thrownText } from './core/engine/thrown-text.js';
import { MODULE_OPTIONS_AWAITED, refuseOptionsOutOfReach } from './core/options/lock-options.js';
import { optionsReadByName } from './core/options/options-read-by-name.js';
import { unreadableOption } from './core/options/unreadable-option.js';
import type { RedisLockModuleExtras, RedisLockModuleOptions } from './interfaces/redis-lock-options.interface.js';

export const DEFAULT_MODULE_EXTRAS: Required<RedisLockModuleExtras> = { isGlobal: false, globalInterceptor: true };

/**
 * Checks the extras of `forRoot()` / `forRootAsync()` of `moduleName` (they shape the module,
 * so they are given beside `useFactory`, not returned by it) and makes the module global if
 * asked. The global interceptor is added by the module class (see `lockConflictProviders`).
 */
export function applyModuleExtras(moduleName: string) {
  return (definition: DynamicModule, extras: RedisLockModuleExtras): DynamicModule => {
    for (const option of ['isGlobal', 'globalInterceptor'] as const) {
      const value: unknown = extras[option];
      if (value !== undefined && typeof value !== 'boolean') {
        throw new InvalidLockOptionsError(option, value, 'true or false').within(moduleName);
      }
    }
    return { ...definition, global: extras.isGlobal === true };
  };
}

/**
 * The token of a lock module's options. Its text is the one part of Nest's error that the library
 * controls when the module class is imported without `forRoot()` (`imports: [RedisLockModule]`):
 * "... the exported <token> is available" (or, for the testing module, "can't resolve
 * dependencies of the InMemoryLocks (?) ... the argument "<token>""). It says what to do; the
 * builder's default, `REDIS_LOCK_MODULE_OPTIONS`, named neither `forRoot()` nor the mistake.
 */
export function optionsToken(moduleName: string): string {
  return `nestjs-redis-lock:options of ${moduleName}: import ${moduleName}.forRoot() or ${moduleName}.forRootAsync(), not the class ${moduleName} alone`;
}

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: REDIS_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<RedisLockModuleOptions>({ moduleName: 'RedisLock', optionsInjectionToken: optionsToken('RedisLockModule') })
  .setClassMethodName('forRoot')
  .setExtras<RedisLockModuleExtras>(DEFAULT_MODULE_EXTRAS, applyModuleExtras('RedisLockModule'))
  .build();

/** Where the module's options were given (`RedisLockModule.forRoot()`), for the messages of their errors. */
export const REDIS_LOCK_MODULE_METHOD = Symbol('nestjs-redis-lock:module-method');

/**
 * Nest reads the extras off the options before any check of ours runs: a missing object is
 * refused first, and a Promise or a Map too, since Nest copies their (absent) properties into
 * the plain object our checks then read.
 */
export function checkOptionsObject(options: unknown, where: string): void {
  if (options === null || typeof options !== 'object') {
    throw new InvalidLockOptionsError('options', options, 'an object').within(where);
  }
  try {
    refuseOptionsOutOfReach(options, MODULE_OPTIONS_AWAITED);
  } catch (error) {
    throw error instanceof InvalidLockOptionsError ? error.within(where) : error;
  }
}

/**
 * `forRoot()`'s options, checked and read by name (`names`, the module's options and extras):
 * Nest's module builder copies the options' own names only, and dropped a config class's getters
 * (`get ttl()`) without a word. One whose getter throws is refused naming it and `where`.
 */
export function readForRootOptions<T extends object>(options: T, where: string, names: readonly string[]): T {
  try {
    checkOptionsObject(options, where);
    return optionsReadByName(options, names);
  } catch (error) {
    const refused = unreadableOption(error, options, names);
    throw refused instanceof InvalidLockOptionsError ? refused.within(where) : refused;
  }
}

/**
 * What an async registration (`forRootAsync()`, the board's `registerAsync()`) takes besides
 * Nest's own names, for its checks and their messages.
 */
export interface AsyncOptionNames {
  /** The names its factory returns (`redis`, `keyPrefix`...). */
  returned: readonly string[];
  /** The extras, given beside the factory: they shape the module, which exists before the factory runs. */
  beside: readonly string[];
  /** What the factory returns, one of those names, and the method taking them directly: `the module options`, `redis`, `forRoot()`. */
  says: { what: string; example: string; direct: string };
}

/** The names Nest's ConfigurableModuleBuilder reads off async options (ConfigurableModuleAsyncOptions). */
const NEST_ASYNC_NAMES: ReadonlySet<string> = new Set(['useFactory', 'useClass', 'useExisting', 'inject', 'imports', 'provideInjectionTokensFrom']);

/**
 * Async options: an object with a `useFactory` function (or `useClass` / `useExisting`), and
 * beside it only Nest's names and the extras. Without a factory, Nest fails later with "can't
 * resolve dependencies of <the options token>", naming neither the method nor the option (the
 * options themselves given here, `{ redis }`, are the usual cause). An option beside the factory
 * (`keyPrefix`, the board's `allowedHosts`), or a misspelt name, Nest's builder drops without a
 * word: the module would run on its default.
 */
export function checkAsyncOptions(options: unknown, where: string, names: AsyncOptionNames): void {
  checkOptionsObject(options, where);
  const { useFactory, useClass, useExisting } = options as { useFactory?: unknown; useClass?: unknown; useExisting?: unknown };
  const { what, example, direct } = names.says;
  if (!(typeof useFactory === 'function' || typeof useClass === 'function' || (useFactory === undefined && useClass === undefined && useExisting !== undefined))) {
    throw new InvalidLockOptionsError(
      'useFactory',
      useFactory,
      `a function returning ${what} (or "useClass" / "useExisting"); ${what} themselves, such as "${example}", go in what it returns, or to ${direct}`,
    ).within(where);
  }
  for (const name of Object.keys(options as object)) {
    if (NEST_ASYNC_NAMES.has(name) || names.beside.includes(name)) continue;
    const value = (options as Record<string, unknown>)[name];
    if (names.returned.includes(name)) {
      throw new InvalidLockOptionsError(name, value, `returned by useFactory (or create()), not given beside it: ${what} are read from the factory alone, and this would be dropped`).within(where);
    }
    const known = [...NEST_ASYNC_NAMES, ...names.beside].join(', ');
    throw new InvalidLockOptionsError(name, value, `left out: it is no option here (beside the factory go ${known}; ${what} go in what it returns)`).within(where);
  }
}

/**
 * `forRootAsync()`'s module (or the board's `registerAsync()`'s), its options made by a provider
 * of their own, named for what usually goes wrong there: the factory's `inject` (or the
 * `useExisting` class) provided by no module in its `imports` and no global one. Nest's error
 * then reads "can't resolve dependencies of the <that provider> (?)": under the options token
 * itself, whose text is written for the module class imported alone, it said to call
 * `forRoot()` or `forRootAsync()`, which the application had done. A `useClass` / `useExisting`
 * instance is checked to have the `create()` that Nest's builder calls: without one (a class
 * naming it as other modules do, `createTypeOrmOptions()`), Nest failed with a bare
 * "optionsFactory.create is not a function", naming neither the method nor the option.
 */
export function withCheckedOptionsFactory(definition: DynamicModule, options: unknown, token: string | symbol, where: string): DynamicModule {
  const { useFactory, useClass, useExisting } = options as { useFactory?: unknown; useClass?: unknown; useExisting?: unknown };
  const factoryToken = `nestjs-redis-lock:the options factory of ${where} (what its "inject" or its "useExisting" names must be provided by a module in its "imports", or by a global one)`;
  const option = typeof useClass === 'function' ? 'useClass' : 'useExisting';
  const factory = option === 'useClass' ? useClass : useExisting;
  const checkedFactory: Provider = {
    provide: factoryToken,
    useFactory: (made: { create?: unknown } | null | undefined) => {
      if (typeof made?.create !== 'function') {
        throw new InvalidLockOptionsError(option, factory, 'a class with a create() method returning the module options (the method Nest calls on it)').within(where);
      }
      return namingFailure(() => (made as { create: () => unknown }).create(), where, `${option}'s create()`);
    },
    inject: [factory as never],
  };
  const providers = (definition.providers ?? []).flatMap((provider): Provider[] => {
    if (typeof provider !== 'object' || provider === null || !('provide' in provider) || provider.provide !== token) return [provider];
    const made =
      typeof useFactory === 'function'
        ? { ...provider, provide: factoryToken, useFactory: (...args: unknown[]) => namingFailure(() => useFactory(...args), where, 'useFactory') }
        : checkedFactory;
    return [made, { provide: token, useExisting: factoryToken }];
  });
  return { ...definition, providers };
}

/**
 * What `make` (the user's options factory, called as `factory`) returns, a failure of it (thrown,
 * or a rejection) made an error of `where`'s that keeps it as its `cause`. As it was, the startup
 * failed with the factory's own error ("Error: vault unreachable"), and Nest's log line named
 * neither the module nor its factory, in an application of many async modules.
 */
function namingFailure(make: () => unknown, where: string, factory: string): unknown {
  const named = (error: unknown): unknown =>
    error instanceof RedisLockError ? error : new RedisLockError(`${where}: its ${factory} failed: ${quoteText(thrownText(error), 500)}`, { cause: error });
  let made: unknown;
  try {
    made = make();
  } catch (error) {
    throw named(error);
  }
  return made instanceof Promise ? made.catch((error: unknown) => Promise.reject(named(error))) : made;
}
