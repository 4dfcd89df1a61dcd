import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockKeyError, type LockService } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (rv31, engine): a bad option or key given to a lock call was refused without
 * saying which call it was given to (`Option "permit" must be left out: ...`), while
 * docs/configuration.md promises "where it was given", as the module, `@Locked` and a bad key list
 * say. Options shared as constants or built at run time (what the unknown-name check is for) are
 * exactly where a log line must name the call and its key.
 */
const badOptions: [string, RegExp, (locks: LockService) => Promise<unknown>][] = [
  ['acquire', /^acquire\("k"\): Option "permit"/, (locks) => locks.acquire('k', { limit: 3, permit: 2 } as never)],
  ['tryAcquire', /^tryAcquire\("k"\): Option "permit"/, (locks) => locks.tryAcquire('k', { limit: 3, permit: 2 } as never)],
  ['using', /^using\("k", fn\): Option "permit"/, (locks) => locks.using('k', () => 1, { limit: 3, permit: 2 } as never)],
  ['acquire(keys)', /^acquire\(keys\): Option "ttl"/, (locks) => locks.acquire(['a', 'b'], { ttl: -1 })],
  ['tryAcquire(keys)', /^tryAcquire\(keys\): Option "ttl"/, (locks) => locks.tryAcquire(['a', 'b'], { ttl: -1 })],
  ['using(keys)', /^using\(keys\): Option "fairness"/, (locks) => locks.using(['a', 'b'], () => 1, { fairness: 'unfair' } as never)],
];

const badKeys: [string, RegExp, (locks: LockService) => Promise<unknown>][] = [
  ['acquire', /^acquire\(key\): The lock key must be a string, got number/, (locks) => locks.acquire(5 as never)],
  ['tryAcquire', /^tryAcquire\(key\): The lock key must not be empty/, (locks) => locks.tryAcquire('')],
  ['using', /^using\(key, fn\): The lock key must be a string, got undefined/, (locks) => locks.using(undefined as never, () => 1)],
  ['isLocked', /^isLocked\(key\): The lock key must be a string, got number/, async (locks) => locks.isLocked(5 as never)],
  ['inspect', /^inspect\(key\): The lock key must be a string, got null/, async (locks) => locks.inspect(null as never)],
];

describe.each(useBothStores())('a lock call given bad input ($label)', (backend) => {
  it.each(badOptions)('names the call (%s) as well as the option', async (_, message, call) => {
    const app = await backend.open();
    const error = await call(app.locks).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(message);
    // Nothing half-done: the keys are free.
    expect(await app.locks.isLocked('k')).toBe(false);
    expect(await app.locks.isLocked('a')).toBe(false);
  });

  it.each(badKeys)('names the call (%s) of a bad key', async (_, message, call) => {
    const app = await backend.open();
    const error = await Promise.resolve()
      .then(() => call(app.locks))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toMatch(message);
  });

  it('names extend() and the lock it was called on', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire('held:<b>');
    const error = await lock.extend(-1).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/^extend\(ttl\) of lock "held:<b>": Option "ttl"/);
    expect(lock.held).toBe(true);
    await lock.release();
  });

  it('bounds a hostile key in the call it names', async () => {
    const app = await backend.open();
    const hostile = `${'x'.repeat(900)}\n<script>`;
    const error = await app.locks.acquire(hostile, { ttl: 'soon' } as never).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    const text = (error as Error).message;
    expect(text).toMatch(/^acquire\("x+/);
    expect(text).not.toContain('\n');
    expect(text.length).toBeLessThan(500);
  });
});
