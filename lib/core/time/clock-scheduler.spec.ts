import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClockScheduler } from './clock-scheduler.js';
import { systemClock } from './clock.js';

describe('ClockScheduler.setUnref', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('switches a pending timer of the system clock in place: no timer is armed again', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const set = vi.spyOn(globalThis, 'setTimeout');
    const clear = vi.spyOn(globalThis, 'clearTimeout');
    const scheduler = new ClockScheduler(systemClock, true);
    const work = vi.fn();
    scheduler.schedule(work, 1_000);
    const pending = set.mock.results[0]!.value as NodeJS.Timeout;
    // The watchdog does this each time its group gains its first lock or loses its last one.
    for (let i = 0; i < 3; i++) {
      scheduler.setUnref(false);
      expect(pending.hasRef()).toBe(true);
      scheduler.setUnref(true);
      expect(pending.hasRef()).toBe(false);
    }
    expect(set).toHaveBeenCalledTimes(1);
    expect(clear).not.toHaveBeenCalled();
    vi.advanceTimersByTime(999);
    expect(work).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('arms a timer of a clock without setUnref again, for the time it has left', () => {
    const timers: { ms: number; unref?: boolean }[] = [];
    const clock = { now: () => 100, setTimer: (_fn: () => void, ms: number, unref?: boolean) => (timers.push({ ms, unref }), { cancel: () => undefined }) };
    const scheduler = new ClockScheduler(clock, true);
    scheduler.schedule(() => undefined, 50);
    scheduler.setUnref(false);
    expect(timers).toEqual([
      { ms: 50, unref: true },
      { ms: 50, unref: false },
    ]);
  });
});
