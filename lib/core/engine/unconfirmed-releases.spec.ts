import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../keys/lock-key.js';
import { UnconfirmedReleases } from './unconfirmed-releases.js';

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
});
