import { describe, expect, it, onTestFinished } from 'vitest';
import { LockNotAcquiredError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { countAttempts } from '../support/mechanism.js';
import { useOwnServer } from '../support/own-server.js';
import { startRedisServer } from '../support/redis-server.js';

/**
 * Found by a defect hunt (drivers). An acquire() whose attempts Redis refuses in a way that passes
 * (READONLY from a server a failover demoted, LOADING, MASTERDOWN, BUSY) or may pass (OOM) is asked
 * again until its waitTimeout, and then fails with LockNotAcquiredError, the last refusal as its
 * cause. Its message said "Redis did not answer (READONLY You can't write against a read only
 * replica ...)": Redis answered every attempt, refusing it, and an operator reading "did not
 * answer" looks for a network cut or a frozen server, not a demoted one. It now says Redis refused
 * it; a call Redis did not answer still says so.
 */
describe('an acquire() Redis refuses READONLY until its waitTimeout', () => {
  const server = useOwnServer();

  it('says that Redis refused it, not that Redis did not answer', { timeout: 20_000 }, async () => {
    const master = await startRedisServer();
    onTestFinished(() => master.stop());
    const app = await createLockApp({ redis: server.url(), shutdownTimeout: 600 });
    onTestFinished(() => app.close());
    await (await app.locks.acquire('demoted-warm')).release();
    const admin = server.admin();
    await admin.call('REPLICAOF', '127.0.0.1', String(master.port));
    onTestFinished(async () => void (await admin.call('REPLICAOF', 'NO', 'ONE')));
    const attempts = countAttempts(app.locks);
    const error = await app.locks.acquire('demoted', { waitTimeout: 1_000 }).then(
      (lock) => lock,
      (caught: unknown) => caught,
    );
    attempts.stop();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    // Asked again: a refusal that passes.
    expect(attempts.count).toBeGreaterThan(1);
    expect(String((error as Error).cause)).toMatch(/READONLY/);
    // Failed: "... within its waitTimeout of 1000 ms (... after the call): Redis did not answer (READONLY You can't write ...)".
    expect((error as Error).message).toMatch(/: Redis refused it \(READONLY You can't write against a read only replica/);
    expect((error as Error).message).not.toMatch(/did not answer/);
  });
});
