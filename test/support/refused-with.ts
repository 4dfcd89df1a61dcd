import { expect } from 'vitest';

/**
 * The error `write` rejects with, checked to be a `type` (the class is passed in: a test of the
 * built package and one of lib/ each have their own `FencedWriteRefusedError`).
 */
export async function refusedWith<E extends Error>(write: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const error = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}
