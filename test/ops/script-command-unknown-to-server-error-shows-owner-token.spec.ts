import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { handedLockApp, openClient } from '../support/handed-clients.js';
import { nodeRedisClient, nodeRedisLockApp } from '../support/node-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review (drivers). A server that does not know EVALSHA (renamed or disabled with
 * `rename-command`, as some hardening guides and managed offers do, or a proxy that does not pass
 * scripts on) answers "ERR unknown command 'evalsha', with args beginning with: ..." and echoes
 * the call's first arguments: the script's SHA1, the key count, the lock's key and its owner
 * token. The library passed that on: the error of every lock call (and its log line) held the
 * owner token, with which whoever read it could release or extend the lock, and said nothing of
 * what the library needs. The echoed arguments are left out now, and the error says that the
 * locks are Lua scripts sent with EVALSHA and EVAL.
 */
describe('a server with EVALSHA renamed away', () => {
  let server: RedisServer;
  /** Two more such servers, for a quorum of three. */
  let others: RedisServer[] = [];
  beforeAll(async () => {
    [server, ...others] = await Promise.all([0, 1, 2].map(() => startRedisServer(['--rename-command', 'EVALSHA', ''])));
  });
  afterAll(async () => {
    await Promise.all([server, ...others].map((each) => each?.stop()));
  });

  /** What a lock call's error says, with its causes. */
  function told(error: unknown): string {
    const lines: string[] = [];
    for (let at = error as { message?: unknown; cause?: unknown } | undefined; at !== undefined && at !== null; at = at.cause as typeof at) lines.push(String(at.message));
    return lines.join('\n');
  }

  /**
   * A mutex (the bare acquire script), a semaphore (none in quorum mode) and isLocked() (the other
   * scripts' path): what each settled with.
   */
  async function outcomesOf(app: LockApp, semaphores: boolean): Promise<unknown[]> {
    const calls: Promise<unknown>[] = [app.locks.acquire('renamed:mutex', { waitTimeout: 0 }), app.locks.isLocked('renamed:held')];
    if (semaphores) calls.push(app.locks.acquire('renamed:semaphore', { limit: 2, waitTimeout: 0 }));
    return Promise.all(calls.map((call) => call.then((value) => value, (error: unknown) => error)));
  }

  const clients = {
    'its own ioredis connection': () => createLockApp({ redis: server.url }),
    'a node-redis client': async () => nodeRedisLockApp([await nodeRedisClient(server.url)]),
    'a Valkey GLIDE client': async () => handedLockApp(await openClient('GLIDE', server.url)),
    'quorum mode': () => createLockApp({ redis: [server, ...others].map((each) => each.url) }),
  };

  for (const [label, open] of Object.entries(clients)) {
    it(`fails lock calls without the owner token, saying what the library needs (${label})`, { timeout: 20_000 }, async () => {
      const app = await open();
      try {
        // GLIDE sends a script's first call as EVAL (see glide-driver.ts `loaded`), which this
        // server runs: its later calls go as EVALSHA.
        if (label.includes('GLIDE')) {
          for (const taken of await outcomesOf(app, !label.includes('quorum'))) if (taken !== null && typeof taken === 'object' && 'release' in taken) await (taken as { release(): Promise<unknown> }).release();
        }
        const errors = await outcomesOf(app, !label.includes('quorum'));
        expect(errors.every((error) => error instanceof RedisLockError)).toBe(true);
        for (const text of errors.map(told)) {
          expect(text).toMatch(/unknown command 'evalsha'/i);
          expect(text).not.toMatch(/[0-9a-f]{32}\./);
          expect(text).not.toContain('with args beginning with');
          expect(text).toContain('EVALSHA and EVAL');
        }
      } finally {
        await app.close();
      }
    });
  }
});
