/**
 * `setImmediate` and `setTimeout` from `node:timers`, not the globals: a test's fake timers
 * (`vi.useFakeTimers()`, `jest.useFakeTimers()`) replace the global ones, and the library's own
 * turns of the event loop (the in-memory store's replies, a close's last turn, a parked lock's
 * hand-over, a quorum round's end, GLIDE's in-flight backoff) would then never come: every call,
 * and `app.close()`, would hang. Leases, renewals and waits stay on the global timers (they move
 * as the test moves time, see docs/testing.md).
 */
export { setImmediate, setTimeout } from 'node:timers';
