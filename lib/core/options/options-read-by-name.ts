/**
 * `options` as a plain object, each of `names` read by name as a call reads its own options: a
 * config class's getters (`get ttl()`) live on its prototype, and a copy of the own fields (an
 * object spread, Nest's module builder) dropped them without a word. Own fields are kept, so
 * that a name that is no option is still refused. An object literal is returned as it is.
 */
export function optionsReadByName<T extends object>(options: T, names: readonly string[]): T {
  const prototype = Object.getPrototypeOf(options) as object | null;
  if (prototype === Object.prototype || prototype === null) return options;
  const read: Record<string, unknown> = { ...(options as Record<string, unknown>) };
  for (const name of names) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined) read[name] = value;
  }
  return read as T;
}
