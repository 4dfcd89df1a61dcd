import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../keys/lock-key.js';
import type { ReleaseReply } from '../stores/lock-store.js';
import { systemClock } from '../time/clock.js';
import { DeadlineSweeper } from './deadline-sweeper.js';
import { HeldLock, type LockOwner } from './held-lock.js';
import { ManualClock } from '../../testing/manual-clock.js';

/** A held lock over a stand-in owner whose release script answers `replies` in turn. */
function heldLock(replies: (() => Promise<ReleaseReply>)[]) {
  let sent = 0;
  const sweeper = new DeadlineSweeper(systemClock);
  const owner = {
    store: {},
    clock: systemClock,
    sweeper,
    listening: false,
    emit: () => undefined,
    forget: () => undefined,
    wakeGranted: () => undefined,
    cleanUp: (work: Promise<unknown>) => void work.catch(() => undefined),
    sendRelease: () => replies[sent++]!(),
  } as unknown as LockOwner;
  const timing = { ttl: 30_000, renewInterval: 10_000, waitTimeout: 0, autoRenew: false, fenceRetention: 0 };
  const lock = new HeldLock(owner, 'k', lockRedisKeys('lock:', 'k'), 'token', 1, timing as never, systemClock.now(), 30_000);
  return { lock, sent: () => sent, close: () => sweeper.close() };
}

async function unhandledDuring(work: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await work();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return unhandled;
}

describe('HeldLock.releaseThen', () => {
  const failed = new Error('connection reset');

  it('calls back from the release itself, and a failure is nobody else’s unhandled rejection', async () => {
    const { lock, sent, close } = heldLock([() => Promise.reject(failed), () => Promise.resolve({ released: true })]);
    const outcomes: unknown[] = [];
    const unhandled = await unhandledDuring(
      () => new Promise<void>((done) => lock.releaseThen(() => (outcomes.push('released'), done()), (error) => (outcomes.push(error), done()))),
    );
    expect(outcomes.map((error) => (error as Error).cause)).toEqual([failed]);
    expect(unhandled).toEqual([]);
    // As after a failed release(): a later release tries again.
    await lock.release();
    expect(sent()).toBe(2);
    expect(lock.held).toBe(false);
    close();
  });

  it('rejects release() for a caller who asked while that release was in flight', async () => {
    const { lock, close } = heldLock([() => new Promise((_, reject) => setImmediate(() => reject(failed)))]);
    const outcomes: unknown[] = [];
    lock.releaseThen(
      () => outcomes.push('released'),
      (error) => outcomes.push(error),
    );
    // The client's error, named for the release it failed (a RedisLockError, as documented).
    await expect(lock.release()).rejects.toMatchObject({ name: 'RedisLockError', cause: failed });
    expect(outcomes.map((error) => (error as Error).cause)).toEqual([failed]);
    close();
  });

  it('follows a release already under way', async () => {
    const { lock, sent, close } = heldLock([() => Promise.resolve({ released: true })]);
    const releasing = lock.release();
    await new Promise<void>((done) => lock.releaseThen(done, () => done()));
    await releasing;
    expect(sent()).toBe(1);
    close();
  });
});

describe('HeldLock.renewBy (the first renewal of a handed-over lock)', () => {
  /** A lock handed over on a 1 s grant lease, over a stand-in owner that counts renewals. */
  function granted() {
    const clock = new ManualClock();
    const sweeper = new DeadlineSweeper(clock);
    const renewals: number[] = [];
    /** What the next renewal gets instead of a confirmation (no answer, an error, none confirmed). */
    let next: Promise<boolean | undefined> | undefined;
    const owner = {
      clock,
      sweeper,
      listening: false,
      emit: () => undefined,
      forget: () => undefined,
      wakeGranted: () => undefined,
      cleanUp: (work: Promise<unknown>) => void work.catch(() => undefined),
      sendRelease: () => Promise.resolve({ released: true }),
      store: {
        renew: (_lockKey: string, _token: string, ttl: number) => {
          renewals.push(ttl);
          const reply = next ?? Promise.resolve(true);
          next = undefined;
          return reply;
        },
      },
    } as unknown as LockOwner;
    const timing = { ttl: 30_000, renewInterval: 10_000, waitTimeout: 0, autoRenew: false, fenceRetention: 0 };
    const lock = new HeldLock(owner, 'k', lockRedisKeys('lock:', 'k'), 'token', 1, timing as never, clock.now(), 1_000);
    lock.renewBy(clock.now() + 333);
    const answerNext = (reply: Promise<boolean | undefined>) => (next = reply);
    return { lock, clock, renewals, close: () => sweeper.close(), hold: () => answerNext(new Promise(() => undefined)), answerNext };
  }

  it('renews to what is left of its ttl when it comes due (no watchdog), and the lock outlives its grant lease', async () => {
    const { lock, clock, renewals, close } = granted();
    await clock.advance(300);
    expect(renewals).toEqual([]);
    await clock.advance(40);
    // The ttl counts from the lease's start, as for a lock taken by its own attempt.
    expect(renewals).toEqual([30_000 - 333]);
    expect(lock.deadline).toBeGreaterThan(20_000);
    await clock.advance(2_000);
    expect(lock.held).toBe(true);
    close();
  });

  it('renews to what is left of the ttl an extend() still unanswered set, counted from that call', async () => {
    const { lock, clock, renewals, close, hold } = granted();
    await clock.advance(100);
    // Redis has not answered the extension when the first renewal comes due.
    hold();
    void lock.extend(10_000).catch(() => undefined);
    await clock.advance(240);
    expect(renewals).toEqual([10_000, 10_000 - 233]);
    close();
  });

  for (const [failure, reply] of [
    ['failed', () => Promise.reject(new Error('NOPERM'))],
    ['was not confirmed (quorum mode)', () => Promise.resolve(undefined)],
  ] as const) {
    it(`renews to what is left of its own ttl after an extend() that ${failure}: the failed extension never applies`, async () => {
      const { lock, clock, renewals, close, answerNext } = granted();
      await clock.advance(100);
      answerNext(reply());
      await expect(lock.extend(60_000)).rejects.toThrow();
      await clock.advance(240);
      // Before: [60_000, 60_000 - 233], the failed extension's lease given by the first renewal.
      expect(renewals).toEqual([60_000, 30_000 - 333]);
      expect(lock.held).toBe(true);
      await lock.extend();
      expect(renewals.at(-1)).toBe(30_000);
      close();
    });
  }

  it('keeps its own ttl after two overlapping extend() calls that both failed, answered in the order sent', async () => {
    const { lock, clock, renewals, close, answerNext } = granted();
    await clock.advance(400);
    const replies: ((reply: boolean | undefined) => void)[] = [];
    const extendTo = (ttl: number) => {
      answerNext(new Promise((answer) => replies.push(answer)));
      return expect(lock.extend(ttl)).rejects.toThrow(/could not be extended/);
    };
    const first = extendTo(60_000);
    const second = extendTo(90_000);
    replies[0]!(undefined);
    await first;
    replies[1]!(undefined);
    await second;
    // Before: 60_000, the first failed extension's ttl, given back by the second's failure.
    await lock.extend();
    expect(renewals.at(-1)).toBe(30_000);
    close();
  });

  it('sends none for a lock released before it came due', async () => {
    const { lock, clock, renewals, close } = granted();
    await clock.advance(100);
    await lock.release();
    await clock.advance(2_000);
    expect(renewals).toEqual([]);
    close();
  });

  it('is not needed after extend() renewed the lock', async () => {
    const { lock, clock, renewals, close } = granted();
    await lock.extend();
    await clock.advance(2_000);
    expect(renewals).toEqual([30_000]);
    expect(lock.held).toBe(true);
    close();
  });
});
