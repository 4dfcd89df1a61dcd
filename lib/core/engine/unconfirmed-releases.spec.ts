import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../keys/lock-key.js';
import { ManualClock } from '../../testing/manual-clock.js';
import { FIRST_RELEASE_RETRY_MS, UnconfirmedReleases } from './unconfirmed-releases.js';

describe('UnconfirmedReleases', () => {
  const a = lockRedisKeys('lock:', 'a');
  const b = lockRedisKeys('lock:', 'b');

  /** A store whose resends are recorded, answered by `answer` (a rejection is a failure). */
  function resending(clock: ManualClock, answer: (token: string) => Promise<unknown> = () => Promise.resolve({ released: true })) {
    const sent: string[] = [];
    const releases = new UnconfirmedReleases({
      clock,
      outside: (fn) => fn(),
      resend: (names, token) => {
        sent.push(`${names.lock} ${token}`);
        return answer(token);
      },
    });
    return { releases, sent };
  }

  it('sends at shutdown, at once, the releases whose lease may still run, one per key and token', async () => {
    const clock = new ManualClock();
    const { releases, sent } = resending(clock);
    releases.add(a, 't1', 1_000, 0);
    releases.add(b, 't1', 1_000, 0);
    releases.add(a, 't2', 100, 0);
    await clock.advance(150);
    expect(releases.left(clock.now())).toBe(true);
    releases.resendAll(clock.now());
    await releases.settled();
    expect(sent).toEqual(['lock:{a} t1', 'lock:{b} t1']);
    expect(releases.left(clock.now())).toBe(false);
  });

  it('goes on at shutdown with a release refused again, and with one that fails then, until answered or stopped', async () => {
    const clock = new ManualClock();
    let refusals = 1;
    const { releases, sent } = resending(clock, (token) => (token === 'old' && refusals-- > 0 ? Promise.reject(new Error('READONLY')) : Promise.resolve({ released: true })));
    releases.add(a, 'old', 60_000, 0);
    releases.resendAll(clock.now());
    // The shutdown's own release of b fails now: it joins.
    releases.add(b, 'own', 60_000, clock.now());
    let settled = false;
    void releases.settled().then(() => (settled = true));
    await clock.advance(2 * FIRST_RELEASE_RETRY_MS);
    expect(sent).toEqual(['lock:{a} old', 'lock:{b} own', 'lock:{a} old']);
    expect(settled).toBe(true);
    // Stopped: a release failing after the end of shutdown is never sent.
    releases.stop();
    releases.add(a, 'late', 60_000, clock.now());
    await clock.advance(60_000);
    expect(sent).toHaveLength(3);
    expect(releases.left(clock.now())).toBe(false);
  });

  it('keeps the later end when a leave joins the release of the same token, and sends the leave', async () => {
    const clock = new ManualClock();
    const { releases, sent } = resending(clock, () => Promise.reject(new Error('READONLY')));
    const answered: number[] = [];
    // A grant given back unconfirmed (its lease may run a ttl), then its acquisition's leave (3 s),
    // refused for 5 s: past the leave's own end, the lock may still be there.
    releases.add(a, 't', 30_000, 0);
    releases.add(a, 't', 3_000, 0, () => {
      if (clock.now() < 5_000) return Promise.reject(new Error('READONLY'));
      answered.push(clock.now());
      return Promise.resolve();
    });
    await clock.advance(10_000);
    releases.resendAll(clock.now());
    await releases.settled();
    expect({ sent, answered: answered.length }).toEqual({ sent: [], answered: 1 });
    expect(releases.left(clock.now())).toBe(false);
  });

  it('drops the spent ones as new ones come, once there are enough to sweep', () => {
    const releases = new UnconfirmedReleases();
    for (let i = 0; i < 64; i++) releases.add(lockRedisKeys('lock:', `k${i}`), 't', 100, 0);
    releases.add(b, 't2', 1_000, 200);
    // The spent ones are gone: what is left runs until 1000.
    expect(releases.left(999)).toBe(true);
    expect(releases.left(1_000)).toBe(false);
    expect((releases as unknown as { pending: Map<string, unknown> }).pending.size).toBe(1);
  });

  it('sends each again while its lease may run, backing off, until one answer either way', async () => {
    const clock = new ManualClock();
    const sent: string[] = [];
    let failing = 2;
    const releases = new UnconfirmedReleases({
      clock,
      outside: (fn) => fn(),
      resend: (names, token) => {
        sent.push(`${names.lock} ${token} @${clock.now() - start}`);
        return failing-- > 0 ? Promise.reject(new Error('TRYAGAIN')) : Promise.resolve({ released: true });
      },
    });
    const start = clock.now();
    releases.add(a, 't1', start + 60_000, start);
    // Spent before its first retry: never sent again.
    releases.add(b, 't1', start + 100, start);
    await clock.advance(FIRST_RELEASE_RETRY_MS);
    await clock.advance(2 * FIRST_RELEASE_RETRY_MS);
    await clock.advance(4 * FIRST_RELEASE_RETRY_MS);
    expect(sent).toEqual(['lock:{a} t1 @250', 'lock:{a} t1 @750', 'lock:{a} t1 @1750']);
    // Confirmed by the third: nothing left for shutdown, and no timer left armed.
    expect(releases.left(clock.now())).toBe(false);
    await clock.advance(60_000);
    expect(sent).toHaveLength(3);
  });

  it('gives up a release refused for good, and every one left once the client is closed, naming them at shutdown', async () => {
    const clock = new ManualClock();
    const sent: string[] = [];
    let closed = false;
    const releases = new UnconfirmedReleases({
      clock,
      outside: (fn) => fn(),
      resend: (names, token) => {
        sent.push(`${names.lock} ${token}`);
        return Promise.reject(new Error(token === 'noperm' ? 'NOPERM' : 'READONLY'));
      },
      closed: () => closed,
      refusedForGood: (error) => (error as Error).message === 'NOPERM',
    });
    releases.add(a, 'noperm', 60_000, 0);
    releases.add(b, 'readonly', 60_000, 0);
    releases.resendAll(clock.now());
    await clock.advance(0);
    // The refusal for good is sent no more; the other one goes on, until the client is closed.
    expect(sent).toEqual(['lock:{a} noperm', 'lock:{b} readonly']);
    let settled = false;
    void releases.settled().then(() => (settled = true));
    closed = true;
    await clock.advance(4 * FIRST_RELEASE_RETRY_MS);
    expect(sent).toHaveLength(2);
    expect(settled).toBe(true);
    expect(releases.left(clock.now())).toBe(false);
    expect(releases.givenUpAtShutdown()).toEqual(['lock:{a}', 'lock:{b}']);
  });
});
