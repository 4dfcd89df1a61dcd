import { describe, expect, it } from 'vitest';
import { UnsupportedLockKindError, type LockService } from '../../lib/index.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review (thirty-fifth session): quorum mode refuses a semaphore (`limit`) and a read lock
 * (`mode: 'read'`) with `UnsupportedLockKindError`, and that refusal alone did not say which call
 * it was given to, although every other refusal of a call's options does (`acquire("k"): Option
 * "fairness" must be 'fifo' in quorum mode ...`, and the same refusal of a `@Locked` method names
 * the method): a multi-key call's named one of its keys as "lock", neither the call nor that it was
 * a key list.
 */
const calls: [string, RegExp, (locks: LockService) => Promise<unknown>][] = [
  ['acquire', /^acquire\("k"\): Semaphores \(option "limit"/, (locks) => locks.acquire('k', { limit: 2 })],
  ['tryAcquire', /^tryAcquire\("k"\): Read locks \(option mode: 'read'/, (locks) => locks.tryAcquire('k', { mode: 'read' })],
  ['using', /^using\("k", fn\): Semaphores \(option "limit"/, (locks) => locks.using('k', () => 1, { limit: 2 })],
  ['acquire(keys)', /^acquire\(keys\): Read locks/, (locks) => locks.acquire(['a', 'k'], { mode: 'read' })],
  ['tryAcquire(keys)', /^tryAcquire\(keys\): Semaphores/, (locks) => locks.tryAcquire(['a', 'k'], { limit: 2 })],
  ['using(keys)', /^using\(keys\): Semaphores/, (locks) => locks.using(['a', 'k'], () => 1, { limit: 2 })],
];

describe('quorum mode: a call refused for a kind of lock it cannot serve', () => {
  const { app, get } = useQuorumNodes();

  it.each(calls)('names the call (%s) as well as the option', async (_, message, call) => {
    const { locks } = await app();
    const error = await call(locks).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnsupportedLockKindError);
    expect((error as Error).message).toMatch(message);
    // Refused before any key was taken (read on the masters themselves: no round to time out).
    for (const i of [0, 1, 2]) expect([await get(i, 'lock:{a}'), await get(i, 'lock:{k}')]).toEqual([null, null]);
  });
});
