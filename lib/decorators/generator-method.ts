/**
 * A generator method's body runs as its caller iterates, after the call returned: the lock would
 * be given back before any of it ran.
 */
export const GENERATOR_REFUSAL =
  'a generator method runs its body as it is iterated, after the call returned, where no lock is held; return an array, a Promise or an Observable (held until it completes), or lock inside the loop.';

/** Whether `method` is a (native) generator function, sync or async. */
export function isGeneratorFunction(method: Function): boolean {
  const kind = Object.getPrototypeOf(method)?.constructor?.name;
  return kind === 'GeneratorFunction' || kind === 'AsyncGeneratorFunction';
}
