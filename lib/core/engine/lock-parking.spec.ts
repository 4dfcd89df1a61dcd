import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../testing/manual-clock.js';
import type { LockRedisKeys } from '../keys/lock-key.js';
import { driftMargin, type LockTiming } from '../options/lock-options.js';
import type { HeldLock } from './held-lock.js';
import { LockParking, PARK_STEP_ASIDE_MS, PARK_STREAK_MS, PARKS_PER_STREAK, type ParkingHost } from './lock-parking.js';

const names = { lock: 'L', fence: 'L:fence', queue: 'L:queue', waiters: 'L:waiters', released: 'L:released' } satisfies LockRedisKeys;
const timing = { ttl: 1_000 } as LockTiming;
const token = 'aaaa.holder.since';
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A parking over a manual clock, whose host records what it was asked to hold, hand out and free. */
function parking() {
  const clock = new ManualClock();
  const freed: string[] = [];
  const expired: string[] = [];
  const handedOut: string[] = [];
  let closed = false;
  const host: ParkingHost = {
    clock,
    asideClock: clock,
    get closed() {
      return closed;
    },
    hold: (_key, _names, held, fencingToken, _timing, leaseStart, lease) =>
      ({ token: held, fencingToken, deadline: leaseStart + lease - driftMargin(lease), expire: () => expired.push(held) }) as unknown as HeldLock,
    acquired: (lock) => {
      handedOut.push(lock.token);
      return lock;
    },
    unpark: (_names, parked) => freed.push(parked),
  };
  const park = new LockParking(host);
  const ask = (ttl = timing.ttl) => park.asking('k', names, { ...timing, ttl }, undefined, () => 'bbbb.holder.later');
  return { clock, park, freed, expired, handedOut, ask, close: () => (closed = true) };
}

/** One greedy round: release (parked, `contended` or not), answered, asked again in the same turn. */
function release(p: ReturnType<typeof parking>, contended: boolean, fencingToken: number) {
  const ticket = p.park.releasing(names, token, timing.ttl)!;
  p.park.answered(names, ticket, ticket.park === undefined ? { released: true } : { released: true, parked: { fencingToken, contended } });
  return ticket;
}

/** A key this parking knows as greedy: asked once, released, asked again in that turn. */
function greedy(p: ReturnType<typeof parking>): void {
  expect(p.ask()).toBeUndefined();
  expect(release(p, false, 1).park).toBeUndefined();
  expect(p.ask()).toBeUndefined();
}

describe('LockParking', () => {
  it('parks only for a caller that asked again in the turn its release came back, and hands the parked lock to the next one', async () => {
    const p = parking();
    greedy(p);
    const ticket = release(p, false, 7);
    expect(ticket.park?.token).toMatch(/\.holder\./);
    const lock = p.ask() as HeldLock;
    expect(lock.token).toBe(ticket.park!.token);
    expect(lock.fencingToken).toBe(7);
    expect(p.handedOut).toEqual([ticket.park!.token]);
    await nextTurn();
    expect(p.freed).toEqual([]);
  });

  it('frees a parked lock nobody asked for by the next turn, and forgets the greedy mark', async () => {
    const p = parking();
    greedy(p);
    const ticket = release(p, false, 7);
    await nextTurn();
    expect(p.freed).toEqual([ticket.park!.token]);
    expect(p.park.releasing(names, token, timing.ttl)).toBeUndefined();
  });

  it('never hands out a parked lock whose lease ran out here: it is expired (given back) instead', async () => {
    const p = parking();
    greedy(p);
    const ticket = release(p, false, 7);
    // The event loop stalled: the lease ran out before the turn was over.
    const now = p.clock.now();
    p.clock.now = () => now + timing.ttl;
    expect(p.ask()).toBeUndefined();
    expect(p.expired).toEqual([ticket.park!.token]);
    expect(p.handedOut).toEqual([]);
  });

  it('frees a parked lock a caller with another ttl asked for, and lets it ask Redis', () => {
    const p = parking();
    greedy(p);
    const ticket = release(p, false, 7);
    expect(p.ask(2_000)).toBeUndefined();
    expect(p.freed).toEqual([ticket.park!.token]);
  });

  it('makes a caller that asks while a park is on its way wait for its answer', async () => {
    const p = parking();
    greedy(p);
    const ticket = p.park.releasing(names, token, timing.ttl)!;
    const waiting = p.ask();
    expect(waiting).toBeInstanceOf(Promise);
    p.park.answered(names, ticket, { released: true, parked: { fencingToken: 9, contended: false } });
    await waiting;
    expect((p.ask() as HeldLock).fencingToken).toBe(9);
  });

  it('frees what a park request may have parked when its answer is lost or a refusal (a resend of a release that ran), never after a plain release', () => {
    const p = parking();
    greedy(p);
    const lost = p.park.releasing(names, token, timing.ttl)!;
    p.park.answered(names, lost, undefined);
    const refused = p.park.releasing(names, token, timing.ttl)!;
    p.park.answered(names, refused, { released: false });
    const handedOver = p.park.releasing(names, token, timing.ttl)!;
    p.park.answered(names, handedOver, { released: true, grant: { token: 'queued', fencingToken: 3 } });
    expect([lost, refused, handedOver].every((ticket) => ticket.park !== undefined)).toBe(true);
    expect(p.freed).toEqual([lost.park!.token, refused.park!.token]);
    expect(p.ask()).toBeUndefined();
  });

  it('frees a lock parked for a key dropped from its table meanwhile (too many keys), and lets the callers waiting for it go on', async () => {
    const p = parking();
    greedy(p);
    const ticket = p.park.releasing(names, token, timing.ttl)!;
    const waiting = p.ask() as Promise<void>;
    for (let i = 0; i < 1_000; i++) p.park.asking('other', { ...names, lock: `other-${i}` }, timing, undefined, () => token);
    p.park.answered(names, ticket, { released: true, parked: { fencingToken: 9, contended: false } });
    await waiting;
    expect(p.freed).toEqual([ticket.park!.token]);
    expect(p.ask()).toBeUndefined();
  });

  it(`ends a streak after ${PARKS_PER_STREAK} parks that found barging waiters: the next release is a plain one, and callers step aside for ${PARK_STEP_ASIDE_MS} ms`, async () => {
    const p = parking();
    greedy(p);
    for (let i = 0; i < PARKS_PER_STREAK; i++) {
      expect(release(p, true, 10 + i).park).toBeDefined();
      expect(p.ask()).toHaveProperty('fencingToken', 10 + i);
    }
    expect(release(p, true, 0).park).toBeUndefined();
    let asked = false;
    void (p.ask() as Promise<void>).then(() => (asked = true));
    await nextTurn();
    expect(asked).toBe(false);
    await p.clock.advance(PARK_STEP_ASIDE_MS);
    expect(asked).toBe(true);
    // The next streak starts afresh.
    expect(p.ask()).toBeUndefined();
    expect(release(p, true, 99).park).toBeDefined();
  });

  it(`ends a streak ${PARK_STREAK_MS} ms after its first park that found barging waiters, whatever the count`, async () => {
    const p = parking();
    greedy(p);
    release(p, true, 10);
    p.ask();
    await p.clock.advance(PARK_STREAK_MS);
    expect(release(p, false, 11).park).toBeUndefined();
  });

  it('keeps parking while nobody else waits', async () => {
    const p = parking();
    greedy(p);
    for (let i = 0; i < PARKS_PER_STREAK * 2; i++) {
      expect(release(p, false, 10 + i).park).toBeDefined();
      p.ask();
    }
  });

  it('frees every parked lock at shutdown, and parks nothing after it', () => {
    const p = parking();
    greedy(p);
    const ticket = release(p, false, 7);
    p.close();
    p.park.close();
    expect(p.freed).toEqual([ticket.park!.token]);
    expect(p.ask()).toBeUndefined();
    expect(p.park.releasing(names, token, timing.ttl)?.park).toBeUndefined();
  });
});
