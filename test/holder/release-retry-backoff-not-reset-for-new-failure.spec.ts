// docs/locks.md, `release()`: "A release Redis did not answer ... is sent again while its lease
// may run (after 250 ms, then twice as late each time up to 4 s)" (fix d8939ef).
//
// What happens: UnconfirmedReleases keeps ONE backoff for all entries (this.delay), reset to
// 250 ms only when a timer fires and finds nothing pending. After an earlier release needed a few
// retries (the delay grew to 4 s), a release that fails later, while the timer is still armed for
// the grown delay, is first sent again when that timer fires, up to 4 s later, not 250 ms: its
// waiters wait out up to 4 s of a finished holder's lease. Under a steady trickle of failures
// (a Cluster migrating slots: TRYAGAIN now and then) the pending set is never empty at a fire, so
// every new failure gets the 4 s delay. Shown on the class with a manual clock (the engine builds
// it with its own clock, LockManager:122): which moment the new entry is first resent at.
import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { FIRST_RELEASE_RETRY_MS, UnconfirmedReleases } from '../../lib/core/engine/unconfirmed-releases.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';

describe('a release that fails after an earlier one backed off', () => {
  it('is first sent again 250 ms after it failed, not at the earlier backoff of up to 4 s', async () => {
    const clock = new ManualClock();
    const start = clock.now();
    const sent: string[] = [];
    const answers = new Map<string, number>([['a', 4]]); // 'a' fails its first 4 resends
    const releases = new UnconfirmedReleases({
      clock,
      outside: (fn) => fn(),
      resend: (_names, token) => {
        sent.push(`${token}@${clock.now() - start}`);
        const left = answers.get(token) ?? 0;
        answers.set(token, left - 1);
        return left > 0 ? Promise.reject(new Error('TRYAGAIN')) : Promise.resolve({ released: true });
      },
    });
    const a = lockRedisKeys('lock:', 'a');
    const b = lockRedisKeys('lock:', 'b');
    releases.add(a, 'a', start + 60_000, start);
    // a is sent again at 250, 750, 1750, 3750 (refused each time) and 7750 (confirmed).
    for (const step of [250, 500, 1_000, 2_000, 4_000]) await clock.advance(step);
    expect(sent).toEqual(['a@250', 'a@750', 'a@1750', 'a@3750', 'a@7750']);
    // A new release fails at 8000; b's lease runs for another minute.
    await clock.advance(250);
    releases.add(b, 'b', clock.now() + 60_000, clock.now());
    await clock.advance(FIRST_RELEASE_RETRY_MS);
    // Docs: sent again after 250 ms, at 8250. Sent at 11750 instead.
    expect(sent.filter((entry) => entry.startsWith('b@'))).toEqual(['b@8250']);
    releases.stop();
  });
});
