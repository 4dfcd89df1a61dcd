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
