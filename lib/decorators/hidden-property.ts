/**
 * Makes `key`, once set on an instance of `prototype`'s class (Nest's property injection assigns
 * it, as does the library when it hands a provider its service), a non-enumerable own property.
 * `console.log` and `util.inspect` of the user's service then leave out the library's plumbing,
 * and with it the remedy that the key's description spells out for Nest's dependency error (see
 * `LOCK_SERVICE_PROPERTY`), which would read as a misconfiguration of a healthy service.
 */
export function hideOnInstances(prototype: object, key: symbol): void {
  if (Object.getOwnPropertyDescriptor(prototype, key) !== undefined) return;
  Object.defineProperty(prototype, key, {
    configurable: true,
    set(this: object, value: unknown) {
      Object.defineProperty(this, key, { value, writable: true, configurable: true, enumerable: false });
    },
  });
}

/**
 * What to say of a decorated method called on an object that is no instance of its class, or
 * `undefined` when it was called on one. A method handed on unbound as a callback is called with
 * a `this` of Node's: a timer's `Timeout`, the `EventEmitter` it listens to. Its call has no lock
 * service, and that is no fault of how Nest made the provider.
 */
export function foreignThis(instance: unknown, prototype: object): string | undefined {
  if (instance === undefined || instance === null) return undefined;
  if (Object.prototype.isPrototypeOf.call(prototype, instance)) return undefined;
  const owner = (prototype as { constructor?: { name?: unknown } }).constructor?.name;
  const ownerName = typeof owner === 'string' && owner !== '' ? owner : 'its class';
  return (
    `was called on ${describeThis(instance)}, not on an instance of ${ownerName}: pass it bound (instance.method.bind(instance), or an arrow function), ` +
    'since a timer or an event emitter calls a callback with a this of its own.'
  );
}

function describeThis(value: unknown): string {
  if (typeof value !== 'object' && typeof value !== 'function') return `a ${typeof value}`;
  let name: unknown;
  try {
    name = Object.getPrototypeOf(value)?.constructor?.name;
  } catch {
    // A Proxy that throws: nothing better to say of it.
  }
  // A class name from code; anything else (a computed or odd one) is not shown.
  if (typeof name !== 'string' || !/^[A-Za-z_$][\w$]{0,63}$/.test(name) || name === 'Object') return 'another object';
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
}
