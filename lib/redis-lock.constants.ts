/**
 * Property under which Nest injects `LockService` into classes with `@Locked` methods. Its
 * description is the one text of Nest's error (`Please make sure that the "..." property is
 * available`) that the library controls, for such a class in a module that does not see
 * RedisLockModule: it says what to do.
 */
export const LOCK_SERVICE_PROPERTY: unique symbol = Symbol(
  'nestjs-redis-lock:LockService, for @Locked: import RedisLockModule into this module, or give RedisLockModule.forRoot() isGlobal: true',
);

/**
 * What to say when the `LockService` Nest injected is not one (a test's fake, given by `useValue`
 * or `overrideProvider(LockService)`): `@Locked` methods, jobs and elections run through the
 * engine of the real one, which a fake has not.
 */
export const NOT_A_LOCK_SERVICE =
  'is not a LockService of nestjs-redis-lock (a fake given with useValue or overrideProvider(LockService)?): @Locked methods, jobs and elections ' +
  'run through the real one. To test without Redis, import RedisLockTestingModule.forRoot() from nestjs-redis-lock/testing (the same LockService, ' +
  'on an in-memory store) instead of faking LockService.';

/** `LockService`'s internal engine, reached by `@Locked` wrappers. */
export const LOCK_RUNNER: unique symbol = Symbol('nestjs-redis-lock:runner');

/**
 * Provider of a `LockBackendFactory`: when present, `LockService` keeps its locks there instead
 * of in the Redis of the `redis` option (the testing module provides the in-memory store).
 */
export const LOCK_BACKEND_FACTORY: unique symbol = Symbol('nestjs-redis-lock:backend');

/** Metadata a `@Locked` wrapper carries: its key and options. */
export const LOCKED_METADATA = 'nestjs-redis-lock:locked';
