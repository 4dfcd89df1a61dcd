import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { nodeRedisClient, nodeRedisLockApp } from '../support/node-redis.js';
import { handedLockApp, openClient } from '../support/handed-clients.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review (drivers). EVALSHA answered NOSCRIPT (a server without the script: restarted,
 * SCRIPT FLUSH, a failover) is sent again as EVAL; a server that does not know EVAL (renamed or
 * disabled with `rename-command`) answers "ERR unknown command 'eval', with args beginning with:
 * ..." and echoes the call's first arguments: the script's opening, then its keys and owner token
 * as far as the echo goes. The EVALSHA's refusal had that echo left out (`scriptError`); the
 * node-redis driver's EVAL sent after NOSCRIPT (the scripts other than acquire and release: a
 * semaphore's, isLocked()'s) passed the EVAL's refusal on as it was, echo and all, in the cause of
 * the call's error and its log line.
 */
describe('a server with EVAL renamed away, the scripts not loaded', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(['--rename-command', 'EVAL', '']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** What a lock call's error says, with its causes. */
  function told(error: unknown): string {
    const lines: string[] = [];
    for (let at = error as { message?: unknown; cause?: unknown } | undefined; at !== undefined && at !== null; at = at.cause as typeof at) lines.push(String(at.message));
    return lines.join('\n');
  }

  const clients = {
    'a node-redis client': async () => nodeRedisLockApp([await nodeRedisClient(server.url)]),
    // GLIDE sends a script's first calls as EVAL (see glide-driver.ts `loaded`), and EVAL after NOSCRIPT.
    'a Valkey GLIDE client': async () => handedLockApp(await openClient('GLIDE', server.url)),
  };

  it.each(Object.entries(clients))('fails the calls sent as EVAL without the echoed arguments (%s)', { timeout: 20_000 }, async (_label, open) => {
    const app = await open();
    try {
      const calls = [app.locks.isLocked('renamed:held'), app.locks.acquire('renamed:semaphore', { limit: 2, waitTimeout: 0 }), app.locks.acquire('renamed:mutex', { waitTimeout: 0 })];
      const errors = await Promise.all(calls.map((call) => call.then((value) => value, (error: unknown) => error)));
      for (const error of errors) {
        expect(error).toBeInstanceOf(RedisLockError);
        const text = told(error);
        expect(text).toMatch(/unknown command 'eval'/i);
        expect(text).not.toContain('with args beginning with');
        expect(text).not.toMatch(/[0-9a-f]{32}\./);
        expect(text).toContain('EVALSHA and EVAL');
      }
    } finally {
      await app.close();
    }
  });
});
