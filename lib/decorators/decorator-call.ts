import { RedisLockError } from '../errors/redis-lock.error.js';

/**
 * Refuses a method decorator's call that did not come with a property descriptor, before anything
 * reads it: a class field (`@Locked('k') handle = async () => ...`, from JavaScript or a build that
 * does not type-check) gets none, and neither does a decorator a build emits as a standard (TC39)
 * one, called with `(value, context)` (esbuild, vitest's default transform, for a tsconfig without
 * `experimentalDecorators`). Either failed on `descriptor.value` with a bare TypeError.
 *
 * @param decorator as messages name it: `@Locked`, `@WithoutOverlapping()`.
 * @param notMethod the end of the refusal of a member that is no method (`only methods can be locked`).
 */
export function checkDecoratorCall(decorator: string, target: unknown, propertyKey: unknown, descriptor: unknown, notMethod: string): void {
  if (typeof descriptor === 'object' && descriptor !== null) return;
  const context = propertyKey as { kind?: unknown; name?: unknown } | null;
  if (typeof context === 'object' && context !== null && typeof context.kind === 'string') {
    throw new RedisLockError(
      `${decorator} on ${String(context.name)}: called as a standard (TC39) decorator (of a ${context.kind}); the library's decorators, as Nest's, ` +
        'need TypeScript\'s "experimentalDecorators": true and "emitDecoratorMetadata": true in the tsconfig the build reads (under vitest, a transform that honours them, such as unplugin-swc).',
    );
  }
  const owner = typeof target === 'function' ? (target as { name?: unknown }).name : (target as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  throw new RedisLockError(`${decorator} on ${String(owner)}.${String(propertyKey)}: ${notMethod}, not accessors or properties (a class field holding a function is a property: make it a method).`);
}
