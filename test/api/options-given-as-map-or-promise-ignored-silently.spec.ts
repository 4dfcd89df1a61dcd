import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, Locked } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { optionsRefused as refused, refusal } from '../support/options-argument-refused.js';

/**
 * Found by review (forty-third session). A lock call's options given as a Map
 * (`acquire('k', new Map([['ttl', 5_000]]))`) or as a Promise of them (an async options builder
 * not awaited) have no own option names: the call took them as no options at all, and ran with
 * the module's ttl and waitTimeout without a word, the lock held for a lease the caller never
 * meant. The call now refuses the argument itself, naming it and the call, before Redis is asked.
 */
describe.each(useBothStores())('a lock call given a Map or a Promise as its options ($label)', (backend) => {
  it('is refused naming the options argument and the call, and nothing is locked', async () => {
    const app = await backend.open();
    let ran = false;
    const map = new Map([['ttl', 5_000]]);
    const promise = Promise.resolve({ ttl: 5_000 });
    expect(await refusal(app.locks.acquire('k', map as never))).toEqual(refused('acquire("k")', 'a Map'));
    expect(await refusal(app.locks.tryAcquire('k', map as never))).toEqual(refused('tryAcquire("k")', 'a Map'));
    expect(await refusal(app.locks.using('k', () => (ran = true), map as never))).toEqual(refused('using("k", fn)', 'a Map'));
    expect(await refusal(app.locks.acquire('k', promise as never))).toEqual(refused('acquire("k")', 'a Promise'));
    expect(await refusal(app.locks.tryAcquire('k', promise as never))).toEqual(refused('tryAcquire("k")', 'a Promise'));
    expect(await refusal(app.locks.acquire(['k1', 'k2'], map as never))).toEqual(refused('acquire(keys)', 'a Map'));
    expect(ran).toBe(false);
    expect(await app.locks.isLocked('k')).toBe(false);
    expect(await app.locks.isLocked('k1')).toBe(false);
  });
});

describe('@Locked given a Map as its options', () => {
  it('is refused when the class is defined, naming the options argument and the method', () => {
    const define = () => {
      class Orders {
        @Locked('order:<0>', new Map([['waitTimeout', 0]]) as never)
        pay(_id: string): void {}
      }
      return Orders;
    };
    expect(define).toThrow(InvalidLockOptionsError);
    expect(define).toThrow(/^@Locked on Orders\.pay: Option "options" must be an object of options, not a Map/);
  });
});
