import { describe, expect, it } from 'vitest';
import { DeadlineSweeper } from '../lib/core/engine/deadline-sweeper.js';
import { ReplyWaits } from '../lib/core/engine/reply-waits.js';
import { TIMED_OUT } from '../lib/core/time/settle-within.js';
import { ManualClock } from '../lib/testing/manual-clock.js';

/** The bounded wait every acquire attempt goes through (no Redis needed: it waits for any promise). */
describe('ReplyWaits', () => {
  function setup() {
    const clock = new ManualClock();
    const sweeper = new DeadlineSweeper(clock);
    return { clock, sweeper, waits: new ReplyWaits(sweeper, clock) };
  }

  function deferred<T>() {
    let resolve!: (value: T) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  }

  it('maps a reply that comes in time, and leaves no timer behind', async () => {
    const { clock, waits } = setup();
    const reply = deferred<number>();
    const waited = waits.wait(reply.promise, 1_000, undefined, (value) => value * 2);
    reply.resolve(21);
    await expect(waited).resolves.toBe(42);
    // The sweeper's timer may stay armed (unref'd); advancing past it fires nothing.
    await clock.advance(2_000);
  });

  it('resolves TIMED_OUT past the bound, and ignores the reply that comes later', async () => {
    const { clock, waits } = setup();
    const reply = deferred<number>();
    let mapped = 0;
    const waited = waits.wait(reply.promise, 1_000, undefined, (value) => (mapped = value));
    await clock.advance(999);
    let settled = false;
    void waited.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await clock.advance(1);
    await expect(waited).resolves.toBe(TIMED_OUT);
    reply.resolve(7);
    await reply.promise;
    expect(mapped).toBe(0);
  });

  it("rejects with the reply's error and with an error thrown by the mapping", async () => {
    const { waits } = setup();
    const failed = deferred<number>();
    const waitedFailed = waits.wait(failed.promise, 1_000, undefined, (value) => value);
    failed.reject(new Error('READONLY'));
    await expect(waitedFailed).rejects.toThrow('READONLY');
    await expect(
      waits.wait(Promise.resolve(1), 1_000, undefined, () => {
        throw new Error('map failed');
      }),
    ).rejects.toThrow('map failed');
  });

  it("stops waiting when the caller's signal aborts, and takes its listener off otherwise", async () => {
    const { waits } = setup();
    const controller = new AbortController();
    const waited = waits.wait(new Promise<number>(() => undefined), Infinity, controller.signal, (value) => value);
    controller.abort(new Error('caller gave up'));
    await expect(waited).rejects.toThrow('caller gave up');

    const already = new AbortController();
    already.abort(new Error('before'));
    await expect(waits.wait(Promise.resolve(1), 1_000, already.signal, (value) => value)).rejects.toThrow('before');

    // A signal that outlives many waits must not collect their listeners.
    const shared = new AbortController();
    let added = 0;
    let removed = 0;
    const add = shared.signal.addEventListener.bind(shared.signal);
    const remove = shared.signal.removeEventListener.bind(shared.signal);
    shared.signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add;
    shared.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (removed++, remove(...args))) as typeof remove;
    for (let i = 0; i < 5; i++) await waits.wait(Promise.resolve(i), 1_000, shared.signal, (value) => value);
    expect(added).toBe(5);
    expect(removed).toBe(5);
  });

  it('ends every wait at shutdown, and refuses new ones', async () => {
    const { waits } = setup();
    const first = waits.wait(new Promise<number>(() => undefined), 1_000, undefined, (value) => value);
    const second = waits.wait(new Promise<number>(() => undefined), Infinity, undefined, (value) => value);
    const reason = new Error('shutting down');
    waits.end(reason);
    await expect(first).rejects.toBe(reason);
    await expect(second).rejects.toBe(reason);
    await expect(waits.wait(Promise.resolve(1), 1_000, undefined, (value) => value)).rejects.toBe(reason);
  });

  /**
   * Found by a CI run (thirty-fourth session): a wait asked after shutdown (or under a signal
   * already aborted) rejected at once and left `reply` without a handler. The caller had already
   * sent it (the lock board's list, `inspect()` from a request that came in during the close), and
   * when the closing connection failed it ("Connection is closed."), Node saw an unhandled
   * rejection: a process running with Node's default `--unhandled-rejections=throw` exits on it
   * mid-shutdown.
   */
  it('takes charge of a reply it will not wait for: asked after shutdown or under an aborted signal, its later failure is handled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const shutDown = setup().waits;
      shutDown.end(new Error('shut down'));
      const afterShutdown = deferred<number>();
      await expect(shutDown.wait(afterShutdown.promise, 1_000, undefined, (value) => value)).rejects.toThrow('shut down');
      const underAbort = deferred<number>();
      await expect(setup().waits.wait(underAbort.promise, 1_000, AbortSignal.abort(new Error('gave up')), (value) => value)).rejects.toThrow('gave up');
      afterShutdown.reject(new Error('Connection is closed.'));
      underAbort.reject(new Error('Connection is closed.'));
      // Node reports an unhandled rejection once the microtasks have run: two turns of the loop.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
