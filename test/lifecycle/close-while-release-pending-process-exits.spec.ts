/**
 * Review of d4beb2c (bounded release): a release pending on a frozen Redis keeps the held lock
 * on the deadline sweeper, and the release's promise open, until the reply or the lease's end.
 * An application that calls app.close() then must still exit on its own (no timer, socket or
 * promise left holding the event loop), within shutdownTimeout rather than the 30 s lease.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { useOwnRedis } from '../support/redis.js';

describe('a process closing its app while a release waits for a frozen Redis', () => {
  const own = useOwnRedis();
  afterEach(() => own.server().resume());

  it('exits on its own after app.close()', { timeout: 30_000 }, async () => {
    const child = spawnFixture(new URL('../fixtures/close-with-release-pending-worker.mjs', import.meta.url), { REDIS_URL: own.url() });
    // However long its start takes on a loaded machine (the test's timeout bounds it).
    await child.line(/^acquired$/);
    own.server().pause();
    child.endWith('go');
    await child.line(/^closed$/);
    // Redis stays frozen: the lease (30 s) is far off.
    await expect.poll(() => child.exit, { timeout: 10_000 }).toEqual({ code: 0 });
    expect(child.output()).toContain('release rejected');
  });
});
