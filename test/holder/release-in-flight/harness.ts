import { lockRedisKeys } from '../../../lib/core/keys/lock-key.js';
import type { ReleaseReply } from '../../../lib/core/stores/lock-store.js';
import { DeadlineSweeper } from '../../../lib/core/engine/deadline-sweeper.js';
import { HeldLock, type LockOwner } from '../../../lib/core/engine/held-lock.js';
import { ManualClock } from '../../../lib/testing/manual-clock.js';
import type { LockEvent } from '../../../lib/interfaces/lock-event.interface.js';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A held lock over a stand-in owner on a manual clock; each release sent is a deferred reply the test settles. */
export function heldLock(ttl = 30_000) {
  const clock = new ManualClock();
  const sweeper = new DeadlineSweeper(clock);
  const sent: Deferred<ReleaseReply>[] = [];
  const given: Deferred<ReleaseReply>[] = [];
  const events: LockEvent[] = [];
  const unconfirmed: unknown[] = [];
  const cleanUps: Promise<unknown>[] = [];
  const state = { shuttingDown: false };
  const owner = {
    store: {},
    clock,
    sweeper,
    logger: { log() {}, warn() {}, error() {}, debug() {} },
    scheduler: { add() {}, remove() {} },
    fenceRetention: 0,
    listening: true,
    emit: (event: LockEvent) => events.push(event),
    forget: () => undefined,
    wakeGranted: () => undefined,
    cleanUp: (work: Promise<unknown>) => void cleanUps.push(work.catch(() => undefined)),
    unconfirmedRelease: (_names: unknown, token: string) => unconfirmed.push(token),
    sendRelease: () => {
      const reply = deferred<ReleaseReply>();
      sent.push(reply);
      return reply.promise;
    },
    releaseInRedis: () => {
      const reply = deferred<ReleaseReply>();
      given.push(reply);
      return reply.promise;
    },
    get shuttingDown() {
      return state.shuttingDown;
    },
  } as unknown as LockOwner;
  const timing = { ttl, renewInterval: ttl / 3, waitTimeout: 0, autoRenew: false, fenceRetention: 0 };
  const lock = new HeldLock(owner, 'k', lockRedisKeys('lock:', 'k'), 'token', 1, timing as never, clock.now(), ttl);
  lock.handOut();
  return { lock, clock, sweeper, sent, given, events, unconfirmed, cleanUps, state, close: () => sweeper.close() };
}

export async function unhandledDuring(work: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await work();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  return unhandled;
}

export const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Where a promise stands now. */
export async function stateOf(promise: Promise<unknown>): Promise<string> {
  const marker = {};
  const settled = await Promise.race([promise.then(() => 'resolved', (e) => `rejected: ${(e as Error)?.message}`), new Promise((r) => setImmediate(() => r(marker)))]);
  return settled === marker ? 'pending' : (settled as string);
}
