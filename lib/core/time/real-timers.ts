/**
 * `setImmediate` from `node:timers`, not the global: a test's fake timers (`vi.useFakeTimers()`,
 * `jest.useFakeTimers()`) replace the global one, and the library's own turns of the event loop
 * (the in-memory store's replies, a close's last turn, a parked lock's hand-over, a quorum
 * round's end) would then never come: every call, and `app.close()`, would hang.
 */
export { setImmediate } from 'node:timers';
