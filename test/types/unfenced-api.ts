// Compiled (not run) by `npm run typecheck` against the built package with skipLibCheck off:
// a lock taken with `fencing: false` has no fencing token, and the types say so.
import { FencedRedis, LockService, type AnyLockOptions, type Lock, type LockOptions, type MultiKeyLock, type UnfencedLock, type UnfencedMultiKeyLock } from 'nestjs-redis-lock';

declare const locks: LockService;
declare const fenced: FencedRedis;
declare const someOptions: AnyLockOptions;
declare const sharedOptions: LockOptions;

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | undefined {
  return undefined;
}

export async function unfenced(): Promise<void> {
  const lock = await locks.acquire('report', { fencing: false, ttl: '1m' });
  assertType<Equal<typeof lock, UnfencedLock>>();
  assertType<Equal<typeof lock.fencingToken, undefined>>();
  // @ts-expect-error an unfenced lock has no token to write with
  await fenced.set('report:{day}', 'done', lock.fencingToken);
  // @ts-expect-error nor one to count with
  const next: number = lock.fencingToken + 1;
  void next;
  await lock.release();

  const maybe = await locks.tryAcquire('report', { fencing: false });
  assertType<Equal<typeof maybe, UnfencedLock | null>>();

  await locks.using('report', (held) => {
    assertType<Equal<typeof held, UnfencedLock>>();
    // @ts-expect-error
    return fenced.set('report:{day}', 'done', held.fencingToken);
  }, { fencing: false });

  const many = await locks.acquire(['a', 'b'], { fencing: false });
  assertType<Equal<typeof many, UnfencedMultiKeyLock>>();
  assertType<Equal<typeof many.fencingTokens, undefined>>();
  await many.release();
}

export async function fencedLocks(): Promise<void> {
  // Left out or true: a token, as before.
  const lock = await locks.acquire('invoice');
  assertType<Equal<typeof lock, Lock>>();
  await fenced.set('invoice:{1}', 'paid', lock.fencingToken);
  const explicit = await locks.acquire('invoice', { fencing: true });
  assertType<Equal<typeof explicit, Lock>>();
  const options: LockOptions = { ttl: 5_000 };
  const many = await locks.acquire(['a', 'b'], options);
  assertType<Equal<typeof many, MultiKeyLock>>();

  // Options kept in a variable of the public type: still a token (no `fencing: false` in it).
  const shared = await locks.acquire('invoice', sharedOptions);
  assertType<Equal<typeof shared, Lock>>();
  await fenced.set('invoice:{1}', 'paid', shared.fencingToken);
  // @ts-expect-error `fencing: false` makes UnfencedLockOptions, not LockOptions
  const wrong: LockOptions = { fencing: false };
  void wrong;

  // Known only at run time: maybe a token, maybe none.
  const either = await locks.acquire('invoice', someOptions);
  assertType<Equal<typeof either, Lock | UnfencedLock>>();
  // @ts-expect-error narrow it first
  await fenced.set('invoice:{1}', 'paid', either.fencingToken);
  if (either.fencingToken !== undefined) await fenced.set('invoice:{1}', 'paid', either.fencingToken);

  // @ts-expect-error a boolean, not a string
  await locks.acquire('invoice', { fencing: 'no' });
}
