import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked, RedisLockModule } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';
import { refusedWith } from '../support/refused-with.js';

/**
 * Found by review (forty-fourth session). Options whose reading throws (a config class's getter
 * that throws while its source is not loaded, a Proxy over a strict config object): the user's
 * error went through as it was, naming neither the call nor the option, and `tryAcquire()` threw
 * it synchronously from a method that returns a Promise, when the getter was `waitTimeout`'s.
 * Such options are now refused as a bad value is, naming the call and the option, with the
 * user's error as `cause`; nothing is sent to Redis. So are the module's options (a
 * `forRootAsync()` factory's), which failed the startup with the user's error alone.
 */
class Unloaded extends Error {}

/** A config class whose `name` getter throws until the config is loaded. */
function configThrowingOn(name: string): object {
  return new Proxy(
    {},
    {
      ownKeys: () => [name],
      getOwnPropertyDescriptor: () => ({ configurable: true, enumerable: true, value: undefined }),
      get: (_target, property) => {
        if (property === name) throw new Unloaded(`config not loaded: ${name}`);
        return undefined;
      },
    },
  );
}

describe.each(useBothStores())('a lock call whose options throw when read ($label)', (backend) => {
  const refusal = async (call: () => Promise<unknown>) => {
    let made: Promise<unknown>;
    try {
      made = call();
    } catch (error) {
      made = Promise.resolve(`thrown synchronously: ${String(error)}`);
    }
    const error = await refusedWith(made, InvalidLockOptionsError);
    return { message: error.message, option: error.option, cause: error.cause instanceof Unloaded };
  };
  const refused = (where: string, option: string) => ({
    message: expect.stringMatching(new RegExp(`^${where.replace(/[()[\]]/g, '\\$&')}: Option "${option}" must be readable: reading it threw "config not loaded: ${option}"`)),
    option,
    cause: true,
  });

  it('is refused naming the call and the option, with the error thrown as its cause, and nothing is locked', async () => {
    const app = await backend.open();
    let ran = false;
    expect(await refusal(() => app.locks.acquire('k', configThrowingOn('ttl') as never))).toEqual(refused('acquire("k")', 'ttl'));
    expect(await refusal(() => app.locks.tryAcquire('k', configThrowingOn('waitTimeout') as never))).toEqual(refused('tryAcquire("k")', 'waitTimeout'));
    expect(await refusal(() => app.locks.tryAcquire('k', configThrowingOn('permits') as never))).toEqual(refused('tryAcquire("k")', 'permits'));
    expect(await refusal(() => app.locks.using('k', () => (ran = true), configThrowingOn('autoRenew') as never))).toEqual(refused('using("k", fn)', 'autoRenew'));
    expect(await refusal(() => app.locks.acquire(['k1', 'k2'], configThrowingOn('ttl') as never))).toEqual(refused('acquire(keys)', 'ttl'));
    expect(ran).toBe(false);
    expect(await app.locks.isLocked('k')).toBe(false);
    expect(await app.locks.isLocked('k1')).toBe(false);
  });
});

describe('@Locked given options whose getter throws', () => {
  it('is refused when the class is defined, naming the method and the option, with the error thrown as its cause', () => {
    let error: unknown;
    try {
      class Orders {
        @Locked('order:<0>', configThrowingOn('ttl') as never)
        pay(_id: string): void {}
      }
      void Orders;
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/^@Locked on Orders\.pay: Option "ttl" must be readable: reading it threw "config not loaded: ttl"/);
    expect((error as Error).cause).toBeInstanceOf(Unloaded);
  });
});

describe("a forRootAsync() factory's options whose getter throws", () => {
  it('fail the startup naming the method and the option, with the error thrown as its cause', async () => {
    const config = new Proxy(
      { redis: redisUrl() },
      {
        get: (target, property) => {
          if (property === 'ttl') throw new Unloaded('config not loaded: ttl');
          return (target as Record<PropertyKey, unknown>)[property];
        },
      },
    );
    const error = await Test.createTestingModule({ imports: [RedisLockModule.forRootAsync({ useFactory: () => config })] })
      .setLogger(new CapturedLogs())
      .compile()
      .then(
        async (moduleRef) => moduleRef.close(),
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/^RedisLockModule\.forRootAsync\(\): Option "ttl" must be readable: reading it threw "config not loaded: ttl"/);
    expect((error as Error).cause).toBeInstanceOf(Unloaded);
  });
});
