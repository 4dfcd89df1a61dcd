import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (forty-second session). An array given where a lock call takes its options
 * (`acquire('k', [1])`, keys meant for the first argument, or an argument list spread once too
 * few) was read as an options object whose option names are its indexes: refused as
 * `acquire("k"): Option "0" must be left out: it is no option of a lock call ...`, an option the
 * caller never wrote, and an empty one (`[]`) was taken as no options at all. The call now refuses
 * the argument itself: its options must be an object.
 */
describe.each(useBothStores())('a lock call given an array as its options ($label)', (backend) => {
  const refusal = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    return { option: (error as InvalidLockOptionsError).option, message: (error as Error).message };
  };
  const arrayRefused = (where: string) => ({ option: 'options', message: expect.stringMatching(new RegExp(`^${where.replace(/[()[\]]/g, '\\$&')}: Option "options" must be an object .*got an array\\.$`)) });

  it('is refused naming the options argument and the call, not an option "0"', async () => {
    const app = await backend.open();
    let ran = false;
    expect(await refusal(app.locks.acquire('k', [1] as never))).toEqual(arrayRefused('acquire("k")'));
    expect(await refusal(app.locks.tryAcquire('k', ['ttl'] as never))).toEqual(arrayRefused('tryAcquire("k")'));
    expect(await refusal(app.locks.using('k', () => (ran = true), [{ ttl: 1_000 }] as never))).toEqual(arrayRefused('using("k", fn)'));
    expect(await refusal(app.locks.acquire(['k1', 'k2'], ['k3'] as never))).toEqual(arrayRefused('acquire(keys)'));
    expect(ran).toBe(false);
    expect(await app.locks.isLocked('k')).toBe(false);
  });

  it('is refused when empty too, rather than taken as no options', async () => {
    const app = await backend.open();
    expect(await refusal(app.locks.acquire('k', [] as never))).toEqual(arrayRefused('acquire("k")'));
    expect(await app.locks.isLocked('k')).toBe(false);
  });
});

describe('@Locked given an array as its options', () => {
  it('is refused when the class is defined, naming the options argument and the method', () => {
    const define = () => {
      class Orders {
        @Locked('order:<0>', ['order:<1>'] as never)
        pay(_id: string): void {}
      }
      return Orders;
    };
    expect(define).toThrow(InvalidLockOptionsError);
    expect(define).toThrow(/^@Locked on Orders\.pay: Option "options" must be an object of options, or left out .*got an array\.$/);
  });
});
