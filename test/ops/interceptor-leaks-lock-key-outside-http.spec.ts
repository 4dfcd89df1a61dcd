/**
 * Found by review (thirty-ninth session): `LockConflictInterceptor` mapped lock errors on HTTP
 * routes only. Under GraphQL, microservices (RPC) and WebSockets it passed them through, so the
 * lock key (built from the request: an order id, a user's e-mail) reached the client in the
 * error's message (a GraphQL error carries it as is, and so does an exception filter that
 * forwards a message), whatever `exposeKeyInHttpErrors` said, and a busy lock, a Redis that did
 * not answer and a bad key from the request looked alike. They now get what an HTTP route gets:
 * 409, 503 or 400 as an `HttpException` without the key (@nestjs/graphql turns it into its
 * `CONFLICT`, ... codes; the RPC and WebSocket default filters answer it as any unknown error),
 * the library's error as its `cause`. Under GraphQL, which shows the client any error's message,
 * every other lock error was read with its key too; it is now a 500 without it. A lost lock (here
 * one deleted behind its holder's back) is since answered as on HTTP: 409 without its key
 * (test/ops/interceptor-lock-lost-reaches-route-as-500.spec.ts).
 *
 * Neither @nestjs/graphql nor @nestjs/microservices nor @nestjs/websockets is a dependency: the
 * handlers are run the way those packages run theirs, through Nest's `ExternalContextCreator`,
 * which applies the application's global interceptors for the given context type.
 */
import { HttpException, Injectable } from '@nestjs/common';
import { ExternalContextCreator } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockNotAcquiredError, LockKeyError, LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { useOwnRedis } from '../support/redis.js';

@Injectable()
class Handlers {
  constructor(private readonly locks: LockService) {}

  /** A handler locked on a key of the request's: busy. */
  @Locked('secret:order:<0>', { waitTimeout: 0 })
  async ship(_id: string): Promise<string> {
    return 'shipped';
  }

  /** A handler awaiting a read of the request's key. */
  async held(id: string): Promise<boolean> {
    return this.locks.isLocked(`secret:order:${id}`);
  }

  /** A handler whose lock is deleted in Redis behind its back (an eviction, an operator): its extend() finds it lost. */
  async lose(id: string): Promise<void> {
    const lock = await this.locks.acquire(`secret:order:${id}`);
    await deleteBehindItsBack!(`lock:{secret:order:${id}}`);
    await lock.extend();
  }
}

let deleteBehindItsBack: ((name: string) => Promise<unknown>) | undefined;

describe('LockConflictInterceptor outside HTTP', () => {
  // Its own server, since it is frozen.
  const own = useOwnRedis();
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    own.server().resume();
    await moduleRef?.close();
    moduleRef = undefined;
  });

  /** `method` of the handlers, run as a transport of `type` runs its handlers (global interceptors, no filters). */
  const run = (type: string, method: 'ship' | 'held' | 'lose', ...args: unknown[]): Promise<unknown> => {
    const handlers = moduleRef!.get(Handlers);
    const handler = moduleRef!.get(ExternalContextCreator).create(handlers, handlers[method] as (...args: unknown[]) => unknown, method, undefined, undefined, undefined, undefined, { guards: false, interceptors: true, filters: false }, type);
    return handler(...args).then(() => undefined, (error: unknown) => error);
  };
  /** What a transport's filter gets: its status, whether its message names the key, the library's error as its cause. */
  const seen = (error: unknown) => ({
    status: error instanceof HttpException ? error.getStatus() : `not an HttpException: ${String(error)}`,
    namesKey: String((error as Error).message).includes('secret') || JSON.stringify(error instanceof HttpException ? error.getResponse() : '').includes('secret'),
    cause: (error as Error).cause instanceof RedisLockError,
  });
  const types = ['graphql', 'rpc', 'ws'];

  it('answers a busy lock 409, a bad key 400 and a Redis that does not answer 503, naming no key', async () => {
    moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: own.url() })], providers: [Handlers] }).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    const holder = await locks.acquire('secret:order:42');
    const busy = await Promise.all(types.map((type) => run(type, 'ship', '42')));
    expect(busy.map(seen)).toEqual(types.map(() => ({ status: 409, namesKey: false, cause: true })));
    expect(busy.map((error) => (error as Error).cause)).toEqual(types.map(() => expect.any(LockNotAcquiredError)));
    // A key the request made too long.
    const badKey = await Promise.all(types.map((type) => run(type, 'ship', 'x'.repeat(2_000))));
    expect(badKey.map(seen)).toEqual(types.map(() => ({ status: 400, namesKey: false, cause: true })));
    expect(badKey.map((error) => (error as Error).cause)).toEqual(types.map(() => expect.any(LockKeyError)));
    await holder.release();
    deleteBehindItsBack = (name) => own.redis().del(name);
    const lost = await run('graphql', 'lose', '43');
    expect(seen(lost)).toEqual({ status: 409, namesKey: false, cause: true });
    own.server().pause();
    const unanswered = await Promise.all(types.map((type) => run(type, 'held', '42')));
    expect(unanswered.map(seen)).toEqual(types.map(() => ({ status: 503, namesKey: false, cause: true })));
  });
});
