import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';

/**
 * Nest injects properties into class providers only. A singleton made by `useFactory` gets what
 * its `@Locked` and job methods need when the modules initialise, but a request-scoped or
 * transient one has its instances made later (per request, per consumer): `equip` is given each
 * instance as its factory returns it, before Nest hands it out, and the transient instances
 * already made for singletons now.
 *
 * Nest calls the factory through `wrapper.metatype` for every instance it makes, so that is
 * where the factory is wrapped; what it returns is passed on unchanged.
 */
export function equipScopedFactory(wrapper: InstanceWrapper, equip: (instance: unknown) => void): void {
  if (!wrapper.isFactory || (wrapper.isDependencyTreeStatic() && !wrapper.isTransient)) return;
  const factory = wrapper.metatype as (...args: unknown[]) => unknown;
  if (EQUIPPED.has(factory)) return;
  const equipped = function (this: unknown, ...args: unknown[]): unknown {
    const made = factory.apply(this, args);
    // Nest awaits any thenable a factory returns, not only a native Promise.
    if (isThenable(made)) {
      return Promise.resolve(made).then((instance: unknown) => {
        equip(instance);
        return instance;
      });
    }
    equip(made);
    return made;
  };
  // What Nest's graph and error messages show of the provider stays the factory's.
  Object.defineProperty(equipped, 'name', { value: factory.name, configurable: true });
  Object.defineProperty(equipped, 'length', { value: factory.length, configurable: true });
  EQUIPPED.add(equipped);
  wrapper.metatype = equipped;
  for (const made of wrapper.getStaticTransientInstances()) equip(made?.instance);
}

/** Factories already wrapped: a provider two module instances share is wrapped once. */
const EQUIPPED = new WeakSet<Function>();

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
