import { describe, expect, it } from 'vitest';
import type { Clock } from '../../time/clock.js';
import { SLOT_REFRESH_GAP_MS, SlotRefresh } from './slot-refresh.js';

/** A refresh the test settles, a clock it moves, and the warnings logged. */
function harness() {
  let time = 0;
  const clock: Clock = { now: () => time, setTimer: () => ({ cancel: () => undefined }) };
  const calls: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const warnings: string[] = [];
  const refresh = new SlotRefresh(
    () => new Promise<void>((resolve, reject) => calls.push({ resolve, reject })),
    { error: () => undefined, warn: (message) => warnings.push(message) },
    clock,
  );
  return { refresh, calls, warnings, advance: (ms: number) => (time += ms) };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('SlotRefresh', () => {
  it('runs one refresh at a time, at most one per gap', async () => {
    const { refresh, calls, advance } = harness();
    refresh.request();
    refresh.request();
    expect(calls).toHaveLength(1);
    // Still in flight past the gap: no second one.
    advance(SLOT_REFRESH_GAP_MS * 3);
    refresh.request();
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await settled();
    refresh.request();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve();
    await settled();
    // Done, but within the gap of the last start.
    advance(SLOT_REFRESH_GAP_MS - 1);
    refresh.request();
    expect(calls).toHaveLength(2);
    advance(1);
    refresh.request();
    expect(calls).toHaveLength(3);
  });

  it('logs a failed refresh once until one succeeds again', async () => {
    const { refresh, calls, warnings, advance } = harness();
    for (let i = 0; i < 3; i++) {
      refresh.request();
      calls[i]!.reject(new Error('Failed to refresh slots cache.'));
      await settled();
      advance(SLOT_REFRESH_GAP_MS);
    }
    expect(warnings).toEqual([expect.stringContaining('Failed to refresh slots cache.')]);
    refresh.request();
    calls[3]!.resolve();
    await settled();
    advance(SLOT_REFRESH_GAP_MS);
    refresh.request();
    calls[4]!.reject(new Error('again'));
    await settled();
    expect(warnings).toHaveLength(2);
  });

  it('asks nothing once closed, and logs nothing of a refresh that fails after', async () => {
    const { refresh, calls, warnings } = harness();
    refresh.request();
    refresh.close();
    calls[0]!.reject(new Error('Cluster is disconnected.'));
    await settled();
    refresh.request();
    expect(calls).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  it('takes a refresh that throws for a failed one', async () => {
    const warnings: string[] = [];
    const refresh = new SlotRefresh(
      () => {
        throw new Error('not a cluster');
      },
      { error: () => undefined, warn: (message) => warnings.push(message) },
    );
    refresh.request();
    await settled();
    expect(warnings).toEqual([expect.stringContaining('not a cluster')]);
  });
});
