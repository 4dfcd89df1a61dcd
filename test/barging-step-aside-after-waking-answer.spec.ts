/**
 * Found by review (barging/parking): the step aside that ends a streak is timed from when the waking
 * release is SENT (lock-parking.ts `releasing` -> `stepAside`, a 2 ms timer started before the
 * release leaves), and it also ends the streak (`contendedParks = 0`) when it fires. When that
 * release takes longer than PARK_STEP_ASIDE_MS to be answered (any Redis more than ~1 ms away, a
 * loaded server, a GC pause), the hold-back is over before the release has even freed the lock
 * and published `*`: the greedy caller that asks right after the answer (the usual greedy loop:
 * `await release(); acquire()`) is not held back at all, races the woken waiter with a head start
 * of one message, and its next release parks again (a new streak). docs/locks.md promises the
 * opposite: "then it really releases (which wakes them) and its own callers of the key hold back
 * for 2 ms, so that a woken waiter takes the lock".
 *
 * Driven on LockParking itself (as lib/core/engine/lock-parking.spec.ts does), with a manual
 * clock for both clocks: the only thing that moves is the clock between send and answer.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../lib/testing/manual-clock.js';
import type { LockRedisKeys } from '../lib/core/keys/lock-key.js';
import { driftMargin, type LockTiming } from '../lib/core/options/lock-options.js';
import type { HeldLock } from '../lib/core/engine/held-lock.js';
import { LockParking, PARK_STEP_ASIDE_MS, PARK_STREAK_MS, STEP_ASIDE_ANSWER_BOUND_MS, type ParkingHost } from '../lib/core/engine/lock-parking.js';

const names = { lock: 'L', fence: 'L:fence', queue: 'L:queue', waiters: 'L:waiters', released: 'L:released' } satisfies LockRedisKeys;
const timing = { ttl: 1_000 } as LockTiming;
const token = 'aaaa.holder.since';

function parking() {
  const clock = new ManualClock();
  const host: ParkingHost = {
    clock,
    asideClock: clock,
    closed: false,
    hold: (_key, _names, held, fencingToken, _timing, leaseStart, lease) =>
      ({ token: held, fencingToken, deadline: leaseStart + lease - driftMargin(lease), expire: () => undefined }) as unknown as HeldLock,
    acquired: (lock) => lock,
    unpark: () => undefined,
  };
  const park = new LockParking(host);
  const ask = () => park.asking('k', names, timing, undefined, () => 'bbbb.holder.later');
  return { clock, park, ask };
}

/** A greedy key whose streak ran out by its time bound: the next release is the plain, waking one. */
async function streakOver(p: ReturnType<typeof parking>): Promise<void> {
  expect(p.ask()).toBeUndefined();
  let ticket = p.park.releasing(names, token, timing.ttl)!;
  p.park.answered(names, ticket, { released: true });
  expect(p.ask()).toBeUndefined();
  ticket = p.park.releasing(names, token, timing.ttl)!;
  p.park.answered(names, ticket, { released: true, parked: { fencingToken: 10, contended: true } });
  expect(p.ask()).toHaveProperty('fencingToken', 10);
  await p.clock.advance(PARK_STREAK_MS);
}

describe('the step aside at the end of a streak', () => {
  // Found by review of the fix below: a waking release never answered held the callers back for ever.
  it('ends at a bound from the send when the waking release is never answered', async () => {
    const p = parking();
    await streakOver(p);
    const waking = p.park.releasing(names, token, timing.ttl)!;
    expect(waking.park).toBeUndefined();
    const held = p.ask();
    expect(held).toBeInstanceOf(Promise);
    let over = false;
    void (held as Promise<void>).then(() => (over = true));
    await p.clock.advance(STEP_ASIDE_ANSWER_BOUND_MS + PARK_STEP_ASIDE_MS);
    expect(over).toBe(true);
    expect(p.ask()).toBeUndefined();
  });

  it('holds the greedy callers back after the waking release is answered, not only for 2 ms after it was sent', async () => {
    const p = parking();
    // A greedy key: asked, released, asked again in that turn.
    expect(p.ask()).toBeUndefined();
    let ticket = p.park.releasing(names, token, timing.ttl)!;
    p.park.answered(names, ticket, { released: true });
    expect(p.ask()).toBeUndefined();
    // A streak with barging waiters, run out by its time bound.
    ticket = p.park.releasing(names, token, timing.ttl)!;
    expect(ticket.park).toBeDefined();
    p.park.answered(names, ticket, { released: true, parked: { fencingToken: 10, contended: true } });
    expect(p.ask()).toHaveProperty('fencingToken', 10);
    await p.clock.advance(PARK_STREAK_MS);
    // The waking (plain) release is sent; Redis answers it 3 ms later.
    const waking = p.park.releasing(names, token, timing.ttl)!;
    expect(waking.park).toBeUndefined();
    await p.clock.advance(PARK_STEP_ASIDE_MS + 1);
    p.park.answered(names, waking, { released: true });
    // The greedy caller asks as soon as its release() resolved: it should hold back now, so
    // that the waiter this release just woke gets there first.
    const asked = p.ask();
    expect(asked instanceof Promise ? 'held back' : 'asks Redis at once').toBe('held back');
  });
});
