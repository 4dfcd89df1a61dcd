/**
 * What a hook threw, as a log line shows it, whatever was thrown. `String()` of a value without a
 * prototype (`Object.create(null)`), or one whose `message` or `toString` throws, throws itself:
 * inside the catch that logs the hook's failure, it would skip the log and what follows it (the
 * step-down, the next try).
 */
export function thrownText(error: unknown): string {
  try {
    const message = (error as Error | null | undefined)?.message;
    return String(message ?? error);
  } catch {
    try {
      return Object.prototype.toString.call(error);
    } catch {
      return 'a value that cannot be shown';
    }
  }
}

/** Where a hook threw: the same line is logged at every try for the leadership, and says nothing of where. */
export function thrownStack(error: unknown): string | undefined {
  try {
    const stack = (error as Error | null | undefined)?.stack;
    return typeof stack === 'string' ? stack : undefined;
  } catch {
    return undefined;
  }
}
