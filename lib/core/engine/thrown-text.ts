/**
 * What user code threw (a leader's hook, an `events$` subscriber), as a log line shows it,
 * whatever was thrown. `String()` of a value without a prototype (`Object.create(null)`), or one
 * whose `message` or `toString` throws, throws itself: inside the catch that logs the failure, it
 * would skip the log and what follows it (a step-down, the next try, the lock the event was for).
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

/** Where it threw, or undefined: a leader's hook logs the same line at every try for the leadership, which says nothing of where. */
export function thrownStack(error: unknown): string | undefined {
  try {
    const stack = (error as Error | null | undefined)?.stack;
    return typeof stack === 'string' ? stack : undefined;
  } catch {
    return undefined;
  }
}
