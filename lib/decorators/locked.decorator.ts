import { Inject } from '@nestjs/common';
import { cutWhole, wellFormed } from '../core/keys/cut-text.js';
import { shownName } from '../core/keys/shown-name.js';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants.js';
import { Observable, throwError } from 'rxjs';
import { checkBuiltKey, parseKeyTemplate, type KeyBuilder } from '../core/keys/key-template.js';
import { MAX_LOCK_NAME_LENGTH } from '../core/engine/holder.js';
import { checkLockedOptions, lockOptionsOf } from '../core/options/locked-options.js';
import { runLockedAsync, runLockedObservable, type LockRunner } from '../core/engine/locked-call.js';
import { MAX_KEYS } from '../core/multi-key/canonical-keys.js';
import { LockKeyError } from '../errors/lock-key.error.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import type { LockedOptions, LockKeyFunction } from '../interfaces/locked-options.interface.js';
import type { AnyLockOptions } from '../interfaces/redis-lock-options.interface.js';
import { LockService } from '../lock.service.js';
import { LOCK_RUNNER, LOCK_SERVICE_PROPERTY, LOCKED_METADATA, NOT_A_LOCK_SERVICE } from '../redis-lock.constants.js';
import { JOB_LOCK_METADATA } from '../scheduling/scheduling.constants.js';
import { foreignThis, hideOnInstances } from './hidden-property.js';
import { checkDecoratorCall, checkFactoryCalled } from './decorator-call.js';
import { GENERATOR_REFUSAL, isGeneratorFunction } from './generator-method.js';

type AnyMethod = (...args: any[]) => unknown;

/**
 * Runs the method under a distributed lock whose key is built from its arguments.
 *
 * - `key`: a template, where `<n>` is the n-th argument the method receives and `<n.a.b>` a
 *   property path into it (`'order:<0>'`, `'user:<0.id>:cart:<1>'`), or a function of the
 *   arguments returning the key. A malformed template throws when the class is defined; a
 *   placeholder that cannot be filled (missing, `null`, an object...) fails the call with
 *   `LockKeyError` before the method runs.
 * - A method returning a Promise (or a value) holds the lock until it settles, and returns a
 *   Promise even if it was synchronous. A method declared to return an `Observable` takes the
 *   lock when the Observable is subscribed and holds it until it completes, errors or is
 *   unsubscribed (an SSE client disconnecting, for instance); one whose Observable return type
 *   is only inferred returns a Promise of it, with a warning at its first such call.
 * - On a controller handler `<n>` is the handler's n-th parameter after pipes. A busy lock
 *   answers 409 Conflict over HTTP; elsewhere the call fails with `LockNotAcquiredError`.
 * - Inside the method, `LockService.current()` returns the lock; nested `@Locked` methods on
 *   the same key re-enter.
 * - An array of templates locks all those keys as one (see `LockService.acquire(keys)`): all
 *   or nothing, taken in one canonical order, so overlapping calls never deadlock.
 *
 * The class must be created by Nest (a provider or controller) in a module where `LockService`
 * is available: `LockService` is injected into it as a property.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class AccountsService {
 *   @Locked('account:<0>', { waitTimeout: 2_000 })
 *   async deposit(accountId: string, amount: number) { ... }
 *
 *   @Locked((order: Order) => `order:${order.id}`, { onBusy: 'skip' })
 *   async ship(order: Order) { ... }
 *
 *   @Locked(['account:<0>', 'account:<1>'])
 *   async transfer(from: string, to: string, amount: number) { ... }
 * }
 * ```
 */
export function Locked<A extends any[] = any[]>(
  key: string | LockKeyFunction<A> | readonly string[],
  options?: LockedOptions,
): <M extends (...args: A) => unknown>(target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<M>) => void {
  // `arguments`: the public signature takes two; a third (or a decorator context) says it was applied uncalled.
  checkFactoryCalled('@Locked', Array.from(arguments), 2, "@Locked('<key template>')");
  return (target, propertyKey, descriptor) => {
    checkDecoratorCall('@Locked', target, propertyKey, descriptor, 'only methods can be locked');
    const isStatic = typeof target === 'function';
    const className = isStatic ? (target as { name: string }).name : target.constructor.name;
    // Messages name the method as keys are shown (a computed name may hold a newline); the lock's
    // name and label keep its text as it is (bounded where they are set).
    const named = `${className}.${String(propertyKey)}`;
    const where = shownName(className, String(propertyKey));
    const original = descriptor.value as AnyMethod | undefined;
    if (typeof original !== 'function') {
      throw new RedisLockError(`@Locked on ${where}: only methods can be locked, not accessors or properties.`);
    }
    if (isStatic) {
      throw new RedisLockError(`@Locked on ${where}: static methods cannot be locked; lock an instance method of a provider.`);
    }
    if (isGeneratorFunction(original)) {
      throw new RedisLockError(`@Locked on ${where}: ${GENERATOR_REFUSAL}`);
    }
    if (Reflect.getOwnMetadata(LOCKED_METADATA, original)) {
      throw new RedisLockError(`@Locked on ${where}: the method is already locked by another @Locked.`);
    }
    // As the job decorators refuse a method with @Locked, in either order.
    if (Reflect.getOwnMetadata(JOB_LOCK_METADATA, original) !== undefined || Reflect.getOwnMetadata(JOB_LOCK_METADATA, target, propertyKey) !== undefined) {
      throw new RedisLockError(`@Locked on ${where}: the method already has @WithoutOverlapping() or @OnOneInstance(); use one or the other.`);
    }
    const build = keysBuilder(key, where, target, propertyKey);
    const onBusy = checkLockedOptions(options, where);
    const lockOptions = lockOptionsOf(options);
    // Metrics group calls by the template (never the key), and inspect() names the method. A key
    // function has no template: the method names it, also as one element of an array (which the
    // types refuse but JavaScript can pass), never its source text.
    const template =
      typeof key === 'string' ? key : Array.isArray(key) && key.every((part) => typeof part === 'string') ? key.join(',') : named;
    // A method named by a computed key may hold a lone surrogate, which the name option refuses.
    const naming = { name: cutWhole(wellFormed(template), MAX_LOCK_NAME_LENGTH), label: named };
    // Frozen: the engine checks and resolves a frozen options object once, not on every call.
    const callOptions: AnyLockOptions = Object.freeze({ ...lockOptions, ...naming });
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, propertyKey);
    const returnsObservable =
      typeof returnType === 'function' && (returnType === Observable || returnType.prototype instanceof Observable);
    injectLockService(target);

    const wrapper = function (this: Record<symbol, unknown> | undefined, ...args: unknown[]): unknown {
      let runner: LockRunner;
      let lockKey: string | string[];
      try {
        runner = runnerOf(this, where, target);
        lockKey = build(args);
      } catch (error) {
        return returnsObservable ? throwError(() => error) : Promise.reject(error);
      }
      const call = { where, key: lockKey, options: callOptions, onBusy, invoke: () => original.apply(this, args), method: wrapper };
      return returnsObservable ? runLockedObservable(runner, call) : runLockedAsync(runner, call);
    };

    // Guards, pipes, @HttpCode, Swagger and other decorators keep what they stored on the method.
    for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapper);
    }
    Reflect.defineMetadata(LOCKED_METADATA, { key, options }, wrapper);
    Object.defineProperty(wrapper, 'name', { value: original.name });
    Object.defineProperty(wrapper, 'length', { value: original.length });
    descriptor.value = wrapper as unknown as typeof descriptor.value;
  };
}

/** One key, or (for an array of templates) the keys of a multi-key lock. */
function keysBuilder(key: unknown, where: string, target: object, propertyKey: string | symbol): (args: readonly unknown[]) => string | string[] {
  if (!Array.isArray(key)) return keyBuilder(key, where, target, propertyKey);
  if (key.length === 0) throw new LockKeyError(`@Locked on ${where}: the array of key templates must not be empty.`);
  if (key.length > MAX_KEYS) throw new LockKeyError(`@Locked on ${where}: at most ${MAX_KEYS} key templates can be locked together, got ${key.length}.`);
  const builders = key.map((template: unknown) => keyBuilder(template, where, target, propertyKey));
  return (args) => builders.map((build) => build(args));
}

function keyBuilder(key: unknown, where: string, target: object, propertyKey: string | symbol): KeyBuilder {
  if (typeof key === 'function') {
    return (args) => checkBuiltKey(key(...args), where);
  }
  const paramTypes: unknown = Reflect.getMetadata('design:paramtypes', target, propertyKey);
  // A trailing array parameter may be a rest parameter, which has no fixed arity.
  const arity =
    Array.isArray(paramTypes) && paramTypes[paramTypes.length - 1] !== Array ? paramTypes.length : undefined;
  return parseKeyTemplate(key as string, where, arity);
}

function injectLockService(prototype: object): void {
  const properties: { key: string | symbol }[] = Reflect.getMetadata(PROPERTY_DEPS_METADATA, prototype.constructor) ?? [];
  if (properties.some((property) => property.key === LOCK_SERVICE_PROPERTY)) return;
  Inject(LockService)(prototype, LOCK_SERVICE_PROPERTY);
  hideOnInstances(prototype, LOCK_SERVICE_PROPERTY);
}

function runnerOf(instance: Record<symbol, unknown> | undefined, where: string, prototype: object): LockRunner {
  const service = instance?.[LOCK_SERVICE_PROPERTY] as LockService | undefined;
  if (service instanceof LockService) return service[LOCK_RUNNER];
  const foreign = foreignThis(instance, prototype);
  throw new RedisLockError(
    instance === undefined || instance === null
      ? `@Locked method ${where} was called without its instance; call it as a method or bind it.`
      : foreign !== undefined
        ? `@Locked method ${where} ${foreign}`
        : service !== undefined && service !== null
        ? `@Locked method ${where}: the LockService it was given ${NOT_A_LOCK_SERVICE}`
        : `@Locked method ${where} has no LockService: the instance must be created by Nest, in a module that ` +
        'imports RedisLockModule (or after RedisLockModule.forRoot({ isGlobal: true })), not frozen (or sealed) if a factory made it, ' +
        'and not called from its constructor.',
  );
}
