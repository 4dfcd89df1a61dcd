import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * docs/deployment.md: quorum mode is `['redis://a:6379', 'redis://b:6379', 'redis://c:6379']`,
 * "3 or 5 independent masters"; a lock is held "when a majority granted it". With two masters the
 * majority is both: one node down (or frozen) and no lock can be taken or renewed anywhere, so
 * two masters are strictly less available than one. `checkQuorum()`
 * (lib/core/options/lock-options.ts) refuses only an empty array and duplicates: `redis: [a, b]`
 * starts without an error and without a word in the log, so a deployment that
 * meant to list three nodes and lost one in its configuration (an unset environment variable
 * filtered out) runs with no fault tolerance, and learns it at the first node restart.
 */
describe('quorum mode with two masters', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1].map(() => startRedisServer()))));
  });
  afterAll(() => Promise.all(servers.map((server) => server.stop())));

  async function startup(redis: string[]): Promise<{ error?: unknown; warned: string[] }> {
    let app: LockApp | undefined;
    try {
      app = await createLockApp({ redis });
      // Startup is over: anything the module has to say about its nodes is said by now (the run-id check included).
      await app.locks.using('probe', async () => undefined);
      return { warned: app.logs.lines.filter((line) => line.level === 'warn' || line.level === 'error').map((line) => line.message) };
    } catch (error) {
      return { error, warned: [] };
    } finally {
      await app?.close();
    }
  }

  it('two masters: refused with InvalidLockOptionsError naming "redis", or at least warned about at startup', async () => {
    const { error, warned } = await startup(servers.map((server) => server.url));
    const refused = error instanceof InvalidLockOptionsError && error.option === 'redis';
    const warnedAboutNodes = warned.some((message) => /quorum|majority|master|node/i.test(message));
    expect({ refused, warnedAboutNodes, error: error === undefined ? undefined : String(error) }).toSatisfy((r: { refused: boolean; warnedAboutNodes: boolean }) => r.refused || r.warnedAboutNodes);
  });
});
