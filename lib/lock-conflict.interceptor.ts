import { quoteKey } from './core/keys/quote-key.js';
import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  ServiceUnavailableException,
  type CallHandler,
  type DynamicModule,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { SSE_METADATA } from '@nestjs/common/constants.js';
import { catchError, defaultIfEmpty, throwError, type Observable } from 'rxjs';
import { LockNotAcquiredError } from './errors/lock-not-acquired.error.js';
import { LockKeyError } from './errors/lock-key.error.js';
import type { RedisLockModuleOptions } from './interfaces/redis-lock-options.interface.js';
import { REDIS_LOCK_MODULE_OPTIONS } from './redis-lock.module-definition.js';
import { isShutdownReason } from './errors/shutdown-reason.js';
import { isUnansweredRead } from './core/engine/unanswered.js';
import { LOCKED_METADATA } from './redis-lock.constants.js';

/**
 * Turns a `LockNotAcquiredError` that reaches an HTTP route into 409 Conflict (or 503 when
 * Redis did not answer), instead of the 500 Nest gives unknown errors. Registered globally by
 * `RedisLockModule`, so it covers a `@Locked` handler and a handler that calls a `@Locked`
 * provider method alike. It only maps errors: the lock itself is taken by the method wrapper,
 * after pipes, so a method is never locked twice.
 *
 * With `globalInterceptor: false` the module installs no `APP_INTERCEPTOR`; apply it where you
 * want the mapping, in a module that imports `RedisLockModule` (or with `isGlobal: true`).
 *
 * @example
 * ```ts
 * @Controller('orders')
 * @UseInterceptors(LockConflictInterceptor)
 * export class OrdersController {}
 * ```
 */
@Injectable()
export class LockConflictInterceptor implements NestInterceptor {
  private readonly exposeKey: boolean;

  constructor(@Inject(REDIS_LOCK_MODULE_OPTIONS) options: RedisLockModuleOptions) {
    this.exposeKey = options.exposeKeyInHttpErrors === true;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    // A skipped `@Locked(..., { onBusy: 'skip' })` route that returns an Observable completes
    // empty, which Nest answers with 500 and an error log (it sends the last value): it answers
    // as the same route returning a Promise does, 200 with no body.
    const handled = skipsWhenBusy(context) ? next.handle().pipe(defaultIfEmpty(undefined)) : next.handle();
    return handled.pipe(
      catchError((error: unknown) =>
        throwError(() =>
          error instanceof LockNotAcquiredError
            ? this.toHttp(error)
            : error instanceof LockKeyError
              ? this.badKey(error)
              : isShutdownReason(error)
                ? this.closing(error)
                : isUnansweredRead(error)
                  ? this.unanswered(error)
                  : error,
        ),
      ),
    );
  }

  /**
   * A key the request's values made no lock can have (too long, not well-formed, a placeholder
   * left empty): the client's to fix, 400, not a 500 with an error log per request it sends.
   */
  private badKey(error: LockKeyError): BadRequestException {
    return new BadRequestException(this.exposeKey ? error.message : "The request's values do not make a valid lock key.", { cause: error });
  }

  /** A route reached while the application closes (its server still answers): 503, as for a wait that shutdown ended. */
  private closing(error: unknown): ServiceUnavailableException {
    return new ServiceUnavailableException('The lock service is shutting down. Try again later.', { cause: error });
  }

  /**
   * A read (`isLocked`, `inspect`) or a `tryAcquire()` Redis did not answer within its bound: 503, as a lock's wait
   * Redis left unanswered gets, without the key the message names.
   */
  private unanswered(error: unknown): ServiceUnavailableException {
    return new ServiceUnavailableException('The lock service is unavailable: Redis did not answer. Try again later.', { cause: error });
  }

  private toHttp(error: LockNotAcquiredError): ConflictException | ServiceUnavailableException {
    const what = this.exposeKey ? `Lock ${quoteKey(error.key)}` : 'The resource';
    if (error.cause !== undefined) {
      return new ServiceUnavailableException(`${what} could not be locked: the lock service is unavailable. Try again later.`, { cause: error });
    }
    return new ConflictException(`${what} is locked by another operation. Try again later.`, { cause: error });
  }
}

/** The module's global `APP_INTERCEPTOR`, unless `globalInterceptor` is `false`. */
export function withGlobalInterceptor(definition: DynamicModule, globalInterceptor: boolean | undefined): DynamicModule {
  if (globalInterceptor === false) return definition;
  return { ...definition, providers: [...(definition.providers ?? []), { provide: APP_INTERCEPTOR, useClass: LockConflictInterceptor }] };
}

/** Per route handler: whether it is a `@Locked()` method that skips when busy (read once, not per request). */
const skipping = new WeakMap<object, boolean>();

/**
 * Whether the route's handler is a `@Locked()` method that skips when the lock is busy and
 * answers with one value: not a Server-Sent Events route, whose empty stream is already an
 * answer, and where a default value would go out as an event of its own.
 */
function skipsWhenBusy(context: ExecutionContext): boolean {
  const handler = context.getHandler();
  let skips = skipping.get(handler);
  if (skips === undefined) {
    const locked = Reflect.getOwnMetadata(LOCKED_METADATA, handler) as { options?: { onBusy?: unknown } } | undefined;
    skips = locked?.options?.onBusy === 'skip' && Reflect.getMetadata(SSE_METADATA, handler) !== true;
    skipping.set(handler, skips);
  }
  return skips;
}
