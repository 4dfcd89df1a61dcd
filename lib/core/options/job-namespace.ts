import { LONE_SURROGATE } from '../keys/lock-key.js';
import { InvalidLockOptionsError } from '../../errors/invalid-lock-options.error.js';

/** Checks the module option `jobNamespace`: undefined, or the start of every default job key. */
export function checkJobNamespace(namespace: unknown): string | undefined {
  if (namespace === undefined) return undefined;
  // Well-formed too: it starts every default job key, which the key rules check.
  if (typeof namespace !== 'string' || !/^[^{}\u0000-\u001f\u007f]{1,64}$/u.test(namespace) || LONE_SURROGATE.test(namespace)) {
    throw new InvalidLockOptionsError('jobNamespace', namespace, 'a well-formed string of 1 to 64 characters without braces or control characters');
  }
  return namespace;
}
