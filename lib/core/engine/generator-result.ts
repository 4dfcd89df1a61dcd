/** A generator object, sync or async (a lazy body); not other iterators (a Map's values: already there). */
export function isGenerator(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const tag = Object.prototype.toString.call(value);
  return tag === '[object Generator]' || tag === '[object AsyncGenerator]';
}

/** Closes a generator nobody will iterate; its body never ran, so this runs no code of it. */
export function closeGenerator(value: unknown): void {
  void Promise.resolve((value as { return?: () => unknown }).return?.()).catch(() => undefined);
}
