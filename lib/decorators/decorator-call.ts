import { RedisLockError } from '../errors/redis-lock.error.js';
import { shownName } from '../core/keys/shown-name.js';

/**
 * Refuses a method decorator's call that did not come with a property descriptor, before anything
 * reads it: a class field (`@Locked('k') handle = async () => ...`, from JavaScript or a build that
 * does not type-check) gets none, and neither does a decorator a build emits as a standard (TC39)
 * one, called with `(value, context)` (esbuild, vitest's default transform, for a tsconfig without
 * `experimentalDecorators`). Either failed on `descriptor.value` with a bare TypeError. Names are
 * shown as `shownName` shows them: a class made by a factory, or a computed member name, is the
 * user's text.
 *
 * @param decorator as messages name it: `@Locked`, `@WithoutOverlapping()`.
 * @param notMethod the end of the refusal of a member that is no method (`only methods can be locked`).
 */
export function checkDecoratorCall(decorator: string, target: unknown, propertyKey: unknown, descriptor: unknown, notMethod: string): void {
  if (typeof descriptor === 'object' && descriptor !== null) return;
  const context = propertyKey as { kind?: unknown; name?: unknown } | null;
  if (typeof context === 'object' && context !== null && typeof context.kind === 'string') {
    throw new RedisLockError(
      `${decorator} on ${shownName(String(context.name))}: called as a standard (TC39) decorator (of a ${shownName(context.kind)}); the library's decorators, as Nest's, ` +
        'need TypeScript\'s "experimentalDecorators": true and "emitDecoratorMetadata": true in the tsconfig the build reads (under vitest, a transform that honours them, such as unplugin-swc).',
    );
  }
  const owner = typeof target === 'function' ? (target as { name?: unknown }).name : (target as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  throw new RedisLockError(`${decorator} on ${shownName(String(owner), String(propertyKey))}: ${notMethod}, not accessors or properties (a class field holding a function is a property: make it a method).`);
}

/**
 * Refuses a decorator factory applied without its call (`@Locked` for `@Locked('order:<0>')`,
 * `@WithoutOverlapping` for `@WithoutOverlapping()`), given the factory's `args` and how many it
 * takes: it then gets the prototype, the member's name and its descriptor (or a standard
 * decorator's value and context), and returns the real decorator, which TypeScript's and Babel's
 * helpers take as a descriptor with nothing in it. The method stayed as written, without a word:
 * a `@Locked` one unlocked, a job on every instance at once. TypeScript refuses such a use;
 * JavaScript, a `@ts-ignore` and builds that do not type-check do not.
 *
 * @param written how the decorator is written with its call: `@Locked('<key template>')`.
 */
export function checkFactoryCalled(decorator: string, args: readonly unknown[], arity: number, written: string): void {
  const [target, member] = args;
  const context = member as { kind?: unknown; name?: unknown } | null | undefined;
  const standard = args.length === 2 && typeof context === 'object' && context !== null && typeof context.kind === 'string' && 'name' in context && typeof target === 'function';
  if (args.length <= arity && !standard) return;
  const name = standard ? context!.name : member;
  const owner = standard ? undefined : typeof target === 'function' ? (target as { name?: unknown }).name : (target as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const where = owner === undefined ? shownName(String(name)) : shownName(String(owner), String(name));
  throw new RedisLockError(`${decorator} on ${where} was applied without its call, and would leave the method as written: write ${written}.`);
}
