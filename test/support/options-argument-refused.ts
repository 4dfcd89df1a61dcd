import { expect } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { refusedWith } from './refused-with.js';

/** The option and message of the `InvalidLockOptionsError` `call` rejects with. */
export async function refusal(call: Promise<unknown>): Promise<{ option: string; message: string }> {
  const { option, message } = await refusedWith(call, InvalidLockOptionsError);
  return { option, message };
}

/** What `refusal()` gives for a call (`acquire("k")`) refusing its options argument, given as `what` (`a Map`). */
export function optionsRefused(where: string, what: string): { option: string; message: unknown } {
  return {
    option: 'options',
    message: expect.stringMatching(new RegExp(`^${where.replace(/[()[\]]/g, '\\$&')}: Option "options" must be an object of options, not ${what}`)),
  };
}
