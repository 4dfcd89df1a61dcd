import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../keys/lock-key.js';
import { ManualClock } from '../../testing/manual-clock.js';
import { FIRST_RELEASE_RETRY_MS, UnconfirmedReleases } from './unconfirmed-releases.js';

describe('UnconfirmedReleases', () => {
  const a = lockRedisKeys('lock:', 'a');
  const b = lockRedisKeys('lock:', 'b');

  it('gives shutdown the releases whose lease may still run, once, one per key and token', () => {
    const releases = new UnconfirmedReleases();
    releases.add(a, 't1', 1_000, 0);
    releases.add(b, 't1', 1_000, 0);
    releases.add(a, 't2', 100, 0);
    expect(releases.take(500).map(({ names, token }) => `${names.lock} ${token}`)).toEqual(['lock:{a} t1', 'lock:{b} t1']);
    expect(releases.take(500)).toEqual([]);
  });

  it('drops the spent ones as new ones come, once there are enough to sweep', () => {
    const releases = new UnconfirmedReleases();
    for (let i = 0; i < 64; i++) releases.add(lockRedisKeys('lock:', `k${i}`), 't', 100, 0);
    releases.add(b, 't2', 1_000, 200);
    // Taken at 0, when the spent ones' leases still ran: only the one added after the sweep is left.
    expect(releases.take(0).map(({ token }) => token)).toEqual(['t2']);
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
    expect(releases.take(clock.now())).toEqual([]);
    await clock.advance(60_000);
    expect(sent).toHaveLength(3);
  });
});
