import { describe, expect, it } from 'vitest';
import { runLockedAsync, type LockRunner } from '../lib/core/engine/locked-call.js';
import { systemClock } from '../lib/core/time/clock.js';
import type { Lock } from '../lib/index.js';

/**
 * The wrapper every @Locked call goes through, with a stand-in engine: what it does when the
 * release or the method's result misbehaves in ways Redis and Nest never produce, so that a
 * call can still never hang holding its lock. (The behaviour suites cover it on real stores.)
 */
describe('runLockedAsync', () => {
  function engine(release: () => Promise<void>, warn: (message: string) => void) {
    let released = 0;
    const lock = { key: 'k', release: () => (released++, release()) } as unknown as Lock;
    const runner: LockRunner = {
      logger: { warn, error: () => undefined, log: () => undefined } as unknown as LockRunner['logger'],
      acquire: async () => lock,
      runInChain: (_lock, fn) => fn(),
      stillHeld: (held) => held.held,
      leaseOf: () => 1_000,
      clock: systemClock,
      listening: false,
      emit: () => undefined,
    };
    return { runner, released: () => released };
  }

  const call = (invoke: () => unknown) => ({ where: 'Jobs.run', key: 'k', options: undefined, onBusy: 'throw' as const, invoke });

  it('returns the result when the release rejects with a non-Error and the logger throws', async () => {
    const { runner, released } = engine(
      () => Promise.reject(undefined),
      () => {
        throw new Error('logger down');
      },
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await expect(runLockedAsync(runner, call(async () => 'done'))).resolves.toBe('done');
      await new Promise((resolve) => setImmediate(resolve));
      expect(released()).toBe(1);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('logs a release that failed with any reason, and still returns the result', async () => {
    const warnings: string[] = [];
    const { runner } = engine(() => Promise.reject('connection reset'), (message) => warnings.push(message));
    await expect(runLockedAsync(runner, call(() => 42))).resolves.toBe(42);
    expect(warnings).toEqual(['Release of lock "k" failed (connection reset); its lease will expire on its own.']);
  });

  it('releases the lock and rejects when inspecting the result throws', async () => {
    const { runner, released } = engine(() => Promise.resolve(), () => undefined);
    const hostile = {
      get lift(): never {
        throw new Error('hostile result');
      },
    };
    await expect(runLockedAsync(runner, call(async () => hostile))).rejects.toThrow('hostile result');
    expect(released()).toBe(1);
  });
});
