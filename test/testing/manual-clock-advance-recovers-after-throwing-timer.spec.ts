import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/testing/manual-clock.js';

/**
 * Found by review (lib/testing/manual-clock.ts, `advance()`): calls of `advance()` run one after
 * the other on one promise chain. A timer whose callback threw rejected that chain, and every
 * later `advance()` was chained onto the rejection: it rejected with the same error without moving
 * the clock or firing anything, for the rest of the test. The call that fired the timer should
 * report its error; the clock should stay usable.
 */
describe('ManualClock.advance() after a timer threw', () => {
  it('rejects that call with the error, then moves and fires timers again', async () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.setTimer(() => {
      throw new Error('boom');
    }, 10);
    clock.setTimer(() => fired.push('later'), 50);

    await expect(clock.advance(20)).rejects.toThrow('boom');
    // Before: rejected with 'boom' again, the clock still at 10 and 'later' never fired.
    // The failing call stopped at its timer (10 ms); this one moves 40 ms from there.
    await clock.advance(40);
    expect(clock.now()).toBe(50);
    expect(fired).toEqual(['later']);
  });

  it('lets a call made while the failing one ran go on from where the clock stood', async () => {
    const clock = new ManualClock();
    clock.setTimer(() => {
      throw new Error('boom');
    }, 5);
    const failing = clock.advance(10);
    const next = clock.advance(10);
    await expect(failing).rejects.toThrow('boom');
    await next;
    // The failing call stopped at its timer (5 ms); the next one moved 10 ms from there.
    expect(clock.now()).toBe(15);
  });
});
