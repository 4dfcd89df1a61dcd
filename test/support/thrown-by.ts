/** The error `apply` throws; fails the test when it throws none. */
export function thrownBy(apply: () => void): Error {
  try {
    apply();
  } catch (error) {
    return error as Error;
  }
  throw new Error('nothing was thrown');
}

/** A class whose `name` is `name`, as a factory or a mixin makes one at runtime. */
export function classNamed(name: string): new () => object {
  return { [name]: class {} }[name]!;
}
