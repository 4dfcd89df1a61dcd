import { describe, expect, it, onTestFinished } from 'vitest';
import { LockNotAcquiredError, RedisUnavailableError } from '../../lib/index.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * On one Redis, a call Redis cannot serve for now rejects with a RedisUnavailableError naming the
 * call and its key (`tryAcquire("k"): Redis could not be asked (...)`), the client's error its
 * `cause`, as the class's TSDoc promises. In quorum mode the same refusal of a majority said only
 * "Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed (node 1: ...; node
 * 2: ...)": no call, no key (a log line of many locks' errors could not tell which one), and no
 * `cause`; and extend() said "Redis did not confirm it (not enough nodes answered ...)", a plain
 * RedisLockError, though every master had answered (the batch's refusal for now, kept by the
 * watchdog, was not checked for by the single renewal extend() sends). Here two masters of three refuse every command for now: replicas of a master that is
 * not there, told not to serve stale data (MASTERDOWN), as during a failover.
 */
describe('quorum: the RedisUnavailableError of a majority refusing for now', () => {
  const { app, admin } = useQuorumNodes();

  it('names the call and its key, and its cause is the first refusing master\'s error', { timeout: 30_000 }, async () => {
    const { locks } = await app({ shutdownTimeout: 600 });
    const held = await locks.acquire('q:release', { ttl: 30_000 });
    const extended = await locks.acquire('q:extend', { ttl: 30_000 });
    // Masters again, without the copies the refused release left (a retry starts afresh).
    onTestFinished(async () => {
      for (const i of [1, 2]) {
        await admin(i, (node) => node.call('REPLICAOF', 'NO', 'ONE'));
        await admin(i, (node) => node.call('CONFIG', 'SET', 'replica-serve-stale-data', 'yes'));
      }
      for (const i of [0, 1, 2]) await admin(i, (node) => node.flushall());
    });
    // Masters 1 and 2: replicas of a master not there (port 1), serving nothing meanwhile.
    for (const i of [1, 2]) {
      await admin(i, (node) => node.call('CONFIG', 'SET', 'replica-serve-stale-data', 'no'));
      await admin(i, (node) => node.call('REPLICAOF', '127.0.0.1', '1'));
    }
    const settle = (call: Promise<unknown>): Promise<unknown> => call.then(
      (value) => value,
      (error: unknown) => error,
    );
    const calls: Record<string, [unknown, RegExp]> = {
      tryAcquire: [await settle(locks.tryAcquire('q:try')), /^tryAcquire\("q:try"\): Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed \(node 1: MASTERDOWN .*; node 2: MASTERDOWN .*\)\.$/],
      isLocked: [await settle(locks.isLocked('q:check')), /^isLocked\("q:check"\): Quorum not reached to check the lock: 1 of 3 Redis nodes answered, 2 needed \(node 1: MASTERDOWN .*\)\.$/],
      inspect: [await settle(locks.inspect('q:inspect')), /^inspect\("q:inspect"\): Quorum not reached to inspect the lock: 1 of 3 Redis nodes answered, 2 needed \(node 1: MASTERDOWN .*\)\.$/],
      // On main: a plain RedisLockError, "Redis did not confirm it (not enough nodes answered, ...)".
      extend: [await settle(extended.extend(20_000)), /^Lock "q:extend" could not be extended: Quorum not reached to renew the lock: 1 of 3 Redis nodes answered, 2 needed \(node 1: MASTERDOWN .*\); it is still held until its lease deadline\.$/],
      release: [await settle(held.release()), /^The release of lock "q:release": Quorum not reached to release the lock: 1 of 3 Redis nodes agreed, 2 needed \(node 1: MASTERDOWN .*\); its lease ends on its own in Redis\.$/],
    };
    for (const [name, [error, message]] of Object.entries(calls)) {
      expect(error, name).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message, name).toMatch(message);
      // On main: no cause.
      expect(((error as Error).cause as Error | undefined)?.message, name).toMatch(/^MASTERDOWN /);
    }
    // acquire() asks again until its waitTimeout: the LockNotAcquiredError names the key, and its
    // cause (the quorum's last refusal) carries the first refusing master's error.
    const waited = await settle(locks.acquire('q:wait', { waitTimeout: 300 }));
    expect(waited).toBeInstanceOf(LockNotAcquiredError);
    expect((waited as Error).message).toMatch(/^Lock "q:wait" was not acquired within .*: Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed \(node 1: MASTERDOWN /);
    const cause = (waited as Error).cause as Error;
    expect(cause).toBeInstanceOf(RedisUnavailableError);
    expect(cause.name).toBe('RedisUnavailableError');
    expect((cause.cause as Error | undefined)?.message).toMatch(/^MASTERDOWN /);
  });
});
