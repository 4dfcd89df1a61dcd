import { afterEach, describe, expect, it, vi } from 'vitest';
import { setLongTimeout } from './long-timeout.js';
import { MAX_TIMER_MS } from '../options/lock-options.js';

describe('setLongTimeout', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires a short delay like setTimeout, and not after clear()', async () => {
    const fired: string[] = [];
    setLongTimeout(() => fired.push('a'), 10);
    const b = setLongTimeout(() => fired.push('b'), 10);
    b.clear();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired).toEqual(['a']);
  });

  it('waits 30 days in chunks below the timer limit, never firing early', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const fn = vi.fn();
    const thirtyDays = 30 * 86_400_000;
    setLongTimeout(fn, thirtyDays);
    expect(spy.mock.calls.every(([, ms]) => (ms as number) <= MAX_TIMER_MS)).toBe(true);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(thirtyDays - MAX_TIMER_MS - 1);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(spy.mock.calls.every(([, ms]) => (ms as number) <= MAX_TIMER_MS)).toBe(true);
  });
});

describe('setLongTimeout().setUnref', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('switches whether the pending timer keeps the process alive without arming another one', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const set = vi.spyOn(globalThis, 'setTimeout');
    const fn = vi.fn();
    const timer = setLongTimeout(fn, 1_000, { unref: true });
    const pending = set.mock.results[0]!.value as NodeJS.Timeout;
    expect(pending.hasRef()).toBe(false);
    timer.setUnref(false);
    expect(pending.hasRef()).toBe(true);
    timer.setUnref(true);
    expect(pending.hasRef()).toBe(false);
    expect(set).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('applies to the chunks of a long wait armed later', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const set = vi.spyOn(globalThis, 'setTimeout');
    const timer = setLongTimeout(() => undefined, MAX_TIMER_MS + 10, { unref: true });
    timer.setUnref(false);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(set).toHaveBeenCalledTimes(2);
    expect((set.mock.results[1]!.value as NodeJS.Timeout).hasRef()).toBe(true);
  });
});
