/**
 * Found by review (thirty-eighth session). The step aside that ends a parking streak (LockParking)
 * arms two timers on the process' real clock: its bound from the waking release's send (250 ms)
 * and its 2 ms from that release's answer. Both kept the process alive, and `app.close()` (which
 * ends the parking: `LockParking.close()`) cancels neither: a close in the 250 ms after a streak
 * ended left a timer holding the process open, where docs/configuration.md says that
 * `onApplicationShutdown` stops the module's timers (the real-Redis explorer's invariant
 * `left-alive-after-close`: a closed application leaves nothing keeping its process alive). They
 * only hold back this process' own callers of the key, whose connection keeps the process up for
 * them: they are unref'd now.
 *
 * Driven on LockParking itself (as test/barging-step-aside-after-waking-answer.spec.ts is), with a
 * clock that records whether each timer would keep the process alive.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../lib/testing/manual-clock.js';
import type { Clock } from '../lib/core/time/clock.js';
import type { LockRedisKeys } from '../lib/core/keys/lock-key.js';
import { driftMargin, type LockTiming } from '../lib/core/options/lock-options.js';
import type { HeldLock } from '../lib/core/engine/held-lock.js';
import { LockParking, PARK_STEP_ASIDE_MS, PARK_STREAK_MS, STEP_ASIDE_ANSWER_BOUND_MS, type ParkingHost } from '../lib/core/engine/lock-parking.js';

const names = { lock: 'L', fence: 'L:fence', queue: 'L:queue', waiters: 'L:waiters', released: 'L:released' } satisfies LockRedisKeys;
const timing = { ttl: 1_000 } as LockTiming;
const token = 'aaaa.holder.since';

describe('the step aside that ends a parking streak', () => {
  it('arms no timer that keeps the process alive', async () => {
    const clock = new ManualClock();
    const armed: { ms: number; unref: boolean }[] = [];
    const asideClock: Clock = {
      now: () => clock.now(),
      setTimer: (fn, ms, unref = false) => {
        armed.push({ ms, unref });
        return clock.setTimer(fn, ms);
      },
    };
    const host: ParkingHost = {
      clock,
      asideClock,
      closed: false,
      hold: (_key, _names, held, fencingToken, _timing, leaseStart, lease) =>
        ({ token: held, fencingToken, deadline: leaseStart + lease - driftMargin(lease), expire: () => undefined }) as unknown as HeldLock,
      acquired: (lock) => lock,
      unpark: () => undefined,
    };
    const park = new LockParking(host);
    const ask = () => park.asking('k', names, timing, undefined, () => 'bbbb.holder.later');
    // A greedy key whose streak (with barging waiters) ran out by its time bound.
    expect(ask()).toBeUndefined();
    let ticket = park.releasing(names, token, timing.ttl)!;
    park.answered(names, ticket, { released: true });
    expect(ask()).toBeUndefined();
    ticket = park.releasing(names, token, timing.ttl)!;
    park.answered(names, ticket, { released: true, parked: { fencingToken: 10, contended: true } });
    expect(ask()).toHaveProperty('fencingToken', 10);
    await clock.advance(PARK_STREAK_MS);
    // The waking release, answered: both timers of the step aside are armed.
    const waking = park.releasing(names, token, timing.ttl)!;
    expect(waking.park).toBeUndefined();
    park.answered(names, waking, { released: true });
    expect(armed.map((timer) => timer.ms).sort((a, b) => a - b)).toEqual([PARK_STEP_ASIDE_MS, STEP_ASIDE_ANSWER_BOUND_MS]);
    // Before the fix: both { unref: false }.
    expect(armed.every((timer) => timer.unref)).toBe(true);
    park.close();
  });
});
