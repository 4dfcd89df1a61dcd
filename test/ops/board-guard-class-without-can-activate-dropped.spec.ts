/**
 * Found by review (thirty-third session): `guards` took any function as a guard class. A class
 * whose instance has no `canActivate()` (a Passport strategy put there by mistake, a misspelt
 * method, or `AuthGuard` from `@nestjs/passport` given uncalled: `new AuthGuard()` makes the
 * guard class, not a guard) is dropped without a word by early Nest 11 releases'
 * `GuardsContextCreator` (`.filter(guard => !!guard && isFunction(guard.canActivate))`): checked on
 * 11.0.0, where such a board answered an anonymous GET with 200 and no warning said so, since
 * `guards` was not empty. Later releases (11.2.12, 12, which this suite runs) refuse it at startup,
 * but with their own `InvalidEnhancerException`, naming neither the board nor `guards[i]`. It is
 * now refused when the board is created, as an `InvalidLockOptionsError` naming `guards[i]` and
 * the method, on any Nest version.
 */
import { Injectable, type CanActivate, type INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/** A Passport strategy: injectable, but no guard. */
@Injectable()
class JwtStrategy {
  validate(): boolean {
    return false;
  }
}

/** A guard whose method is misspelt. */
@Injectable()
class AdminGuard {
  canactivate(): boolean {
    return false;
  }
}

/** As `@nestjs/passport`'s `AuthGuard(type)`: a function that makes the guard class. */
function AuthGuard(type?: string): new () => CanActivate {
  return class MixinAuthGuard implements CanActivate {
    canActivate(): boolean {
      return type === 'let-everyone-in';
    }
  };
}

/** A real guard whose `canActivate` is a class field (on the instance, not the prototype). */
@Injectable()
class FieldGuard implements CanActivate {
  canActivate = (): boolean => false;
}

describe('a lock board whose guard class is no guard', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function anonymousRead(guard: unknown): Promise<{ refused?: string; error?: string; status?: number }> {
    try {
      app = await createHttpApp({
        imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ guards: [guard as never] })],
      });
      const url = await listenOnLoopback(app);
      await app.get(LockService).acquire('payroll:emp-1234');
      return { status: (await fetch(`${url}/locks/api/locks`)).status };
    } catch (error) {
      if (error instanceof InvalidLockOptionsError) return { refused: error.option, error: error.message };
      return { error: `${(error as Error)?.constructor?.name}: ${(error as Error)?.message}` };
    }
  }

  it.each([
    ['a Passport strategy', JwtStrategy],
    ['a class with a misspelt canActivate', AdminGuard],
    ['AuthGuard given uncalled (the class factory)', AuthGuard],
  ])('%s is refused naming guards[0] and the method, and nothing is served', async (_case, guard) => {
    const answer = await anonymousRead(guard);
    expect(answer).toEqual({ refused: 'guards[0]', error: expect.stringContaining('RedisLockBoardModule.register: Option "guards[0]"') });
  });

  it('a guard whose canActivate is a class field guards the board', async () => {
    expect(await anonymousRead(FieldGuard)).toEqual({ status: 403 });
  });
});
