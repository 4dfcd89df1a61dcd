import { describe, expect, it } from 'vitest';
import { sleep } from '../support/lock-app.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Checked in the fiftieth session, on a suspicion that a multi-key `tryAcquire()` in quorum mode
 * rejects with `RedisUnavailableError` when one master's round goes unanswered (the one-key case
 * of da3d534d): it does not. Each key's round is decided by the two masters left (a grant with
 * one counter on both ends it; a busy master with the third silent counts as busy), whether the
 * third is frozen (asked and timed out, then skipped as silent) or restarted empty. Only a
 * majority out rejects so (da3d534d stopped two of three), which asking again then answers
 * (`test/behaviour/multi-key-behaviour.ts`).
 */
describe('quorum: a multi-key tryAcquire() with one master of three out', () => {
  const { servers, app } = useQuorumNodes();

  const outcome = (lock: unknown): string => (lock === null ? 'busy' : lock instanceof Error ? `${lock.constructor.name}: ${lock.message}` : 'held');

  it('gets every key while a master is frozen, before and after it counts as silent', { timeout: 60_000 }, async () => {
    const { locks } = await app({ ttl: 5_000 });
    await (await locks.tryAcquire(['mk1:a', 'mk1:b', 'mk1:c']))?.release();
    servers[0]!.pause();
    const outcomes: string[] = [];
    // Spread over the first seconds of the freeze: asked (its part timed out), then skipped.
    for (let i = 0; i < 10; i++) {
      const lock = await locks.tryAcquire(['mk1:a', 'mk1:b', 'mk1:c']).catch((error: unknown) => error);
      outcomes.push(outcome(lock));
      if (lock !== null && !(lock instanceof Error)) await (lock as { release(): Promise<void> }).release();
      await sleep(i * 60);
    }
    servers[0]!.resume();
    expect(outcomes).toEqual(new Array(10).fill('held'));
  });

  it('gets every key right after a master restarted empty, each master in turn', { timeout: 60_000 }, async () => {
    const { locks } = await app({ ttl: 5_000 });
    await (await locks.tryAcquire(['mk2:a', 'mk2:b', 'mk2:c']))?.release();
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      await servers[i % 3]!.stop({ kill: true });
      await servers[i % 3]!.start();
      const lock = await locks.tryAcquire(['mk2:a', 'mk2:b', 'mk2:c']).catch((error: unknown) => error);
      outcomes.push(outcome(lock));
      if (lock !== null && !(lock instanceof Error)) await (lock as { release(): Promise<void> }).release();
    }
    expect(outcomes).toEqual(new Array(6).fill('held'));
  });
});
