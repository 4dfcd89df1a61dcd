import { quoteKey } from './core/keys/quote-key.js';
import {
  BadRequestException,
  ConflictException,
  Inject,
  InternalServerErrorException,
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
import { FencedWriteRefusedError } from './errors/fenced-write-refused.error.js';
import { LockKeyError } from './errors/lock-key.error.js';
import { LockLostError } from './errors/lock-lost.error.js';
import { RedisLockError } from './errors/redis-lock.error.js';
import { RedisUnavailableError } from './errors/redis-unavailable.error.js';
import type { RedisLockModuleOptions } from './interfaces/redis-lock-options.interface.js';
import { REDIS_LOCK_MODULE_OPTIONS } from './redis-lock.module-definition.js';
import { isShutdownReason } from './errors/shutdown-reason.js';
import { isUnansweredRead } from './core/engine/unanswered.js';
import { LOCKED_METADATA } from './redis-lock.constants.js';
import { setRetryAfter, type HeaderResponse } from './retry-after.js';

/**
 * Turns a `LockNotAcquiredError` that reaches an HTTP route into 409 Conflict (or 503 when
 * Redis did not answer), instead of the 500 Nest gives unknown errors; so too a `LockLostError`
 * the handler rethrew from its lock's `signal` (503 for the application closing, a lease run out
 * or a step-down, 409 for a lock Redis no longer held for it), and a `FencedWriteRefusedError`
 * (409: a newer holder claimed the resource, nothing was written), and a `RedisUnavailableError`
 * (503: Redis could not be asked for now). Registered globally by
 * `RedisLockModule`, so it covers a `@Locked` handler and a handler that calls a `@Locked`
 * provider method alike. It only maps errors: the lock itself is taken by the method wrapper,
 * after pipes, so a method is never locked twice. A 503 for a Redis that did not answer, or could
 * not be asked, carries `Retry-After: 1`.
 *
 * GraphQL resolvers, microservice (RPC) handlers and WebSocket gateways get the same exceptions,
 * never naming the key (unless `exposeKeyInHttpErrors`): @nestjs/graphql turns them into its
 * error codes (`CONFLICT`, `SERVICE_UNAVAILABLE`, `BAD_REQUEST`), the RPC and WebSocket default
 * filters answer them as any unknown error; the library's error is their `cause`. Under GraphQL,
 * which shows a client any error's message, every other `RedisLockError` (a renewal refused for
 * good, a failed release) becomes a 500
 * (`INTERNAL_SERVER_ERROR`) without it.
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
    const http = context.getType() === 'http';
    // A skipped `@Locked(..., { onBusy: 'skip' })` route that returns an Observable completes
    // empty, which Nest answers with 500 and an error log (it sends the last value): it answers
    // as the same route returning a Promise does, 200 with no body.
    const handled = http && skipsWhenBusy(context) ? next.handle().pipe(defaultIfEmpty(undefined)) : next.handle();
    // NOTE: under GraphQL, RPC (microservices) and WebSockets too, where a lock error's message
    // would reach the client with its key (a GraphQL error carries it as is, and so does any
    // exception filter that forwards a message). They get the same `HttpException`s: without the
    // key, their status saying busy (409), unavailable (503) or a bad key (400), which
    // @nestjs/graphql turns into its error codes (`CONFLICT`, ...) and which the transports'
    // default filters answer as any unknown error, without its message.
    const graphql = context.getType<string>() === 'graphql';
    return handled.pipe(catchError((error: unknown) => throwError(() => this.answer(error, http ? context : undefined, graphql))));
  }

  /**
   * What a request gets for `error`; `http`: its context, when a `Retry-After` can be set on its
   * response; `graphql`: a GraphQL request's, whose client gets the message of any error.
   */
  private answer(error: unknown, http: ExecutionContext | undefined, graphql: boolean): unknown {
    if (error instanceof LockNotAcquiredError) {
      if (error.cause === undefined) return this.busy(error);
      // A wait a lock of its chain ended (an outer lock the request held, lost while it waited) is
      // answered as that loss rethrown from the lock's signal is: retrying cannot help an unrenewed
      // lease the work outlived, nor a renewal refused for good, left 500s that Nest logs.
      if (error.cause instanceof LockLostError) return mapped(error.cause) ? this.lost(error.cause, http, error) : this.failed(error, graphql);
      if (!isShutdownReason(error.cause)) retryAfter(http);
      return this.unavailable(error);
    }
    if (error instanceof LockKeyError) return this.badKey(error);
    if (isShutdownReason(error)) return this.closing(error);
    if (error instanceof LockLostError && mapped(error)) return this.lost(error, http);
    if (error instanceof FencedWriteRefusedError) return this.fenced(error);
    if (isUnansweredRead(error)) {
      retryAfter(http);
      return this.unanswered(error);
    }
    if (error instanceof RedisUnavailableError) {
      retryAfter(http);
      return this.unreachable(error);
    }
    return this.failed(error, graphql);
  }

  /**
   * Any other lock error (a renewal refused for good, an unrenewed lease the work outlived, a
   * failed release), which a GraphQL client would read with its key: Nest answers it 500 without
   * its message over HTTP, and so do the RPC and WebSocket default filters.
   */
  private failed(error: unknown, graphql: boolean): unknown {
    if (graphql && !this.exposeKey && error instanceof RedisLockError) {
      return new InternalServerErrorException('The lock service failed.', { cause: error });
    }
    return error;
  }

  /**
   * A key the request's values made no lock can have (too long, not well-formed, a placeholder
   * left empty): the client's to fix, 400, not a 500 with an error log per request it sends.
   */
  private badKey(error: LockKeyError): BadRequestException {
    return new BadRequestException(this.exposeKey ? error.message : "The request's values do not make a valid lock key.", { cause: error });
  }

  /**
   * A lock the request held, lost before its work ended (the handler rethrew its `signal`'s
   * reason): by why, as the wait that could not have it would be answered. The application
   * closing: 503, as for a wait that shutdown ended; a lease run out unrenewed (Redis out of
   * reach, the event loop blocked): 503 with `Retry-After`, as for a Redis that did not answer;
   * the lock no longer this owner's in Redis (deleted, evicted, taken over): 409, as a multi-key
   * part lost so; a leader's step-down: 503 (a retry can go to the instance that leads). A renewal
   * refused for good (its `cause`: NOPERM, a renamed command) is left a 500 by the caller, logged:
   * the operator's to fix, as an acquire refused so is; so is the lease of a lock taken with
   * `autoRenew: false` that the work outlived (`renewed` false): its code's to fix (see `mapped`).
   * `cause`: what reached the route, when not the loss itself (a wait it ended).
   */
  private lost(error: LockLostError, http: ExecutionContext | undefined, cause: unknown = error): ConflictException | ServiceUnavailableException {
    switch (error.reason) {
      case 'shutdown':
        return this.closing(cause);
      case 'refused':
        return new ConflictException(`${this.lostLock(error)} was lost before the request's work ended: another operation may hold it now. Try again later.`, { cause });
      case 'expired':
        retryAfter(http);
        return new ServiceUnavailableException(`${this.lostLock(error)} was lost before the request's work ended: the lock service is unavailable. Try again later.`, { cause });
      case 'stepped-down':
        return new ServiceUnavailableException(`${this.lostLock(error)} was given up before the request's work ended: this instance stepped down. Try again later.`, { cause });
    }
  }

  /**
   * A fenced write (or read for update) a newer holder of the lock had claimed the resource
   * before: this holder lost its lock, nothing was written; the conflict a lock lost to another
   * operation is, 409.
   */
  private fenced(error: FencedWriteRefusedError): ConflictException {
    const message = this.exposeKey ? error.message : `The resource was claimed by a newer holder of its lock: nothing was ${error.operation === 'read' ? 'read' : 'written'}. Try again later.`;
    return new ConflictException(message, { cause: error });
  }

  /** A route reached while the application closes (its server still answers): 503, as for a wait that shutdown ended. */
  private closing(error: unknown): ServiceUnavailableException {
    return new ServiceUnavailableException('The lock service is shutting down. Try again later.', { cause: error });
  }

  /**
   * A read (`isLocked`, `inspect`) or a `tryAcquire()` Redis did not answer within its bound: 503,
   * as a lock's wait Redis left unanswered gets, without the key the message names.
   */
  private unanswered(error: unknown): ServiceUnavailableException {
    return new ServiceUnavailableException('The lock service is unavailable: Redis did not answer. Try again later.', { cause: error });
  }

  /**
   * A call Redis could not serve for now, in a way that passes (its connection down or refused, a
   * failover's READONLY or LOADING, a client's command timeout): 503 with `Retry-After`, as for a
   * Redis that did not answer, without the key the message names. What asking again cannot cure
   * (a closed client, NOPERM) is a plain `RedisLockError`, left a 500 that Nest logs.
   */
  private unreachable(error: RedisUnavailableError): ServiceUnavailableException {
    return new ServiceUnavailableException('The lock service is unavailable: Redis could not be asked. Try again later.', { cause: error });
  }

  /** The lock held by another operation for as long as the call waited: 409. */
  private busy(error: LockNotAcquiredError): ConflictException {
    return new ConflictException(`${this.locked(error)} is locked by another operation. Try again later.`, { cause: error });
  }

  /** A wait Redis did not answer, or that the application's shutdown ended: 503. */
  private unavailable(error: LockNotAcquiredError): ServiceUnavailableException {
    return new ServiceUnavailableException(`${this.locked(error)} could not be locked: the lock service is unavailable. Try again later.`, { cause: error });
  }

  private locked(error: LockNotAcquiredError): string {
    return this.exposeKey ? `Lock ${quoteKey(error.key)}` : 'The resource';
  }

  private lostLock(error: LockLostError): string {
    return this.exposeKey ? `Lock ${quoteKey(error.key)}` : "The resource's lock";
  }
}

/**
 * Whether a lost lock is answered by why (`lost`), rather than left a 500 that Nest logs: not a
 * renewal refused for good (its `cause`: NOPERM, a renamed command), the operator's to fix; nor
 * the lease of a lock its code chose not to renew (`autoRenew: false`) that the work outlived,
 * the application's to fix (its message names the remedy): a retry would run out again, so no 503
 * asks for one. Not so one whose renewal (an `extend()`) Redis refused for now: its `cause`.
 */
function mapped(error: LockLostError): boolean {
  // An expired lease's cause is only what Redis last refused its renewals with for now (LOADING): still
  // a 503, for a lock taken with `autoRenew: false` too (its extend() refused so: the work did not outlive its ttl).
  return !(error.reason === 'refused' && error.cause !== undefined) && !(error.reason === 'expired' && !error.renewed && error.cause === undefined);
}

/** Sets `Retry-After` on an HTTP request's response (see `setRetryAfter`). */
function retryAfter(context: ExecutionContext | undefined): void {
  if (context !== undefined) setRetryAfter(context.switchToHttp().getResponse<HeaderResponse>());
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
