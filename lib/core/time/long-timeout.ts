import { MAX_TIMER_MS } from '../options/lock-options.js';

/** A timer that may wait longer than Node's setTimeout can. */
export interface LongTimeout {
  clear(): void;
  /** Changes whether the timer lets the process exit, in place: no timer is armed again. */
  setUnref(unref: boolean): void;
}

/**
 * `setTimeout` for any delay: Node fires a timer of more than 2^31 - 1 ms after 1 ms (with a
 * warning), so a longer wait is cut into chunks, each armed when the previous one fired (a
 * timer never fires early, so the chunks add up to at least the delay). Leases of 30 days and
 * more need this.
 */
export function setLongTimeout(fn: () => void, ms: number, options: { unref?: boolean } = {}): LongTimeout {
  let timer: NodeJS.Timeout | undefined;
  let unref = options.unref === true;
  const arm = (left: number): void => {
    const chunk = Math.min(Math.max(0, left), MAX_TIMER_MS);
    timer = setTimeout(() => (left > chunk ? arm(left - chunk) : fn()), chunk);
    if (unref) timer.unref();
  };
  arm(ms);
  return {
    clear: () => clearTimeout(timer),
    setUnref(next) {
      unref = next;
      if (next) timer?.unref();
      else timer?.ref();
    },
  };
}
