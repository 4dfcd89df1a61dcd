/**
 * Defect (today's fix 5017905, lib/core/engine/unconfirmed-releases.ts): `resendAll()` (called by
 * LockManager.giveBackAll at the start of app.close()) runs `retry()` directly, and `retry()`
 * begins with `this.timer = undefined; this.timerAt = Infinity` as if the armed timer had just
 * fired: the retry timer armed for a release that failed before the close is dropped without
 * being cancelled. `stop()` (the end of close) then cancels only `this.timer`, and the orphan stays
 * armed after app.close(), to run `retry()` on a stopped instance (up to MAX_RELEASE_RETRY_MS
 * later); every later arm() meanwhile can add a second live timer for the same work.
 *
 * Promise: the library's bar, and the class comment "on one unref'd timer set for the soonest";
 * "no retry runs after this" (stop()).
 */
import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { FIRST_RELEASE_RETRY_MS, UnconfirmedReleases } from '../../lib/core/engine/unconfirmed-releases.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';

describe('unconfirmed releases at shutdown', () => {
  it('leaves no retry timer armed once stopped, and runs no retry after stop()', async () => {
    const clock = new ManualClock();
    let sent = 0;
    const releases = new UnconfirmedReleases({
      clock,
      outside: (fn) => fn(),
      // Redis is away: the resend hangs (a client's offline queue).
      resend: () => {
        sent++;
        return new Promise(() => undefined);
      },
    });
    // A release failed while the application ran: its retry is armed.
    releases.add(lockRedisKeys('lock:', 'a'), 't1', 60_000, clock.now());
    expect(clock.pendingTimers).toBe(1);
    // app.close() begins: it is sent again at once.
    releases.resendAll(clock.now());
    expect(sent).toBe(1);
    // app.close() ends.
    releases.stop();
    // Fails: 1, the timer add() armed, dropped by resendAll's retry() without a cancel.
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(FIRST_RELEASE_RETRY_MS);
  });
});
