import { describe, expect, it, onTestFinished } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../../lib/index.js';
import { countAttempts } from '../support/mechanism.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review of 1f89b95f. A LockNotAcquiredError whose last attempt failed says what became of
 * it: "Redis refused it (...)" for Redis' own refusal, and the library's own error as it words
 * itself (a RedisUnansweredError: "Redis did not answer the acquire ... within 1000 ms"). Every
 * other error of the library's own was put in "Redis did not answer (...)": in quorum mode the
 * acquisition that a majority of masters refused READONLY (demoted by a failover) until its
 * waitTimeout read "Redis did not answer (Quorum not reached to acquire the lock: 1 of 3 Redis
 * nodes agreed, 2 needed (node 1: READONLY ...; node 2: READONLY ...))": every master had answered,
 * and an operator reading "did not answer" looks for a network cut or a frozen server, not for
 * demoted masters. The quorum's error says per master what it answered: it is quoted as it words itself.
 */
describe('quorum: an acquire() a majority of masters refuse READONLY until its waitTimeout', () => {
  const { app, admin, servers } = useQuorumNodes();

  it('says the quorum was not reached and what each master answered, not that Redis did not answer', { timeout: 30_000 }, async () => {
    const { locks } = await app({ shutdownTimeout: 600 });
    await (await locks.acquire('q:demoted-warm')).release();
    // Masters 1 and 2 demoted: replicas of master 0, which refuse every write READONLY.
    for (const i of [1, 2]) {
      await admin(i, (node) => node.call('REPLICAOF', '127.0.0.1', String(servers[0]!.port)));
      onTestFinished(() => admin(i, (node) => node.call('REPLICAOF', 'NO', 'ONE')).then(() => undefined));
    }
    const attempts = countAttempts(locks);
    onTestFinished(() => attempts.stop());
    const error = await locks.acquire('q:demoted', { waitTimeout: 1_000 }).then(
      (lock) => lock,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    // Asked again: a refusal that passes.
    expect(attempts.count).toBeGreaterThan(1);
    const cause = (error as Error).cause as Error;
    expect(cause).toBeInstanceOf(RedisLockError);
    expect(cause.message).toMatch(/^Quorum not reached to acquire the lock: .*node 1: .*READONLY.*node 2: .*READONLY/);
    // Failed: "... (... after the call): Redis did not answer (Quorum not reached to acquire the lock: ...)".
    expect((error as Error).message).toMatch(/ms after the call\): Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed \(node 1: .*READONLY.*\)\. Raise waitTimeout/);
    expect((error as Error).message).not.toMatch(/did not answer/);
  });
});
