import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { optionsRefused as refused, refusal } from '../support/options-argument-refused.js';

/**
 * Found by review (forty-fourth session). A lock call's options given as a Set, a Date, a RegExp
 * or an Error (a variable mixed up with another, `acquire(key, startedAt)`) have no option names
 * of their own: the call took them as no options at all and ran on the module's ttl and
 * waitTimeout without a word, as a Map's entries were until last session. The call now refuses
 * the argument, naming it, the kind of value and the call. A config class's instance (fields
 * `ttl`, `waitTimeout`) is still options.
 */
describe.each(useBothStores())('a lock call given a Set, a Date, a RegExp or an Error as its options ($label)', (backend) => {
  it('is refused naming the options argument, the value and the call, and nothing is locked', async () => {
    const app = await backend.open();
    let ran = false;
    expect(await refusal(app.locks.acquire('k', new Set(['ttl']) as never))).toEqual(refused('acquire("k")', 'a Set'));
    expect(await refusal(app.locks.tryAcquire('k', new Date() as never))).toEqual(refused('tryAcquire("k")', 'a Date'));
    expect(await refusal(app.locks.using('k', () => (ran = true), /ttl/ as never))).toEqual(refused('using("k", fn)', 'a RegExp'));
    expect(await refusal(app.locks.acquire('k', new TypeError('boom') as never))).toEqual(refused('acquire("k")', 'a TypeError'));
    expect(await refusal(app.locks.acquire(['k1', 'k2'], new WeakMap() as never))).toEqual(refused('acquire(keys)', 'a WeakMap'));
    expect(ran).toBe(false);
    expect(await app.locks.isLocked('k')).toBe(false);
    expect(await app.locks.isLocked('k1')).toBe(false);
  });

  it("still takes a config class's instance as options", async () => {
    const app = await backend.open();
    class LockConfig {
      ttl = 5_000;
      waitTimeout = 0;
    }
    const lock = await app.locks.acquire('k', new LockConfig());
    await expect(app.locks.tryAcquire('k', new LockConfig())).resolves.toBeNull();
    await lock.release();
  });
});

describe('@Locked given a Set as its options', () => {
  it('is refused when the class is defined, naming the options argument and the method', () => {
    const define = () => {
      class Orders {
        @Locked('order:<0>', new Set(['waitTimeout']) as never)
        pay(_id: string): void {}
      }
      return Orders;
    };
    expect(define).toThrow(InvalidLockOptionsError);
    expect(define).toThrow(/^@Locked on Orders\.pay: Option "options" must be an object of options, not a Set/);
  });
});
