import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedRedis, RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { CLIENTS_ON_URL } from '../support/clients-on-url.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * docs/fencing.md, "Redis: FencedRedis": a refusal of Redis that asking again does not cure (a
 * Redis user without the command or the key, `NOPERM`; a full `maxmemory` under `noeviction`,
 * `OOM`; a server that does not know `EVALSHA` or `EVAL`, renamed with `rename-command`) is a
 * `RedisLockError` naming the call, the key, that nothing was written, and what to fix, the
 * client's error as its `cause`, as the lock calls' such refusals are.
 *
 * Found by a defect hunt (session 49): a fenced write or read for update so refused rejected with
 * the client's bare reply (`NOPERM User ... has no permissions to run the 'evalsha' command`,
 * `OOM command not allowed when used memory > 'maxmemory'`, `ERR unknown command 'evalsha'`), no
 * `RedisLockError`: a filter's `instanceof` could not tell it from the application's own errors,
 * and it named neither the key nor the remedy. None of them runs a write (Redis refuses a
 * script's first write under a full maxmemory, and the scripts read before they write).
 */

const CALLS = {
  set: (fenced: FencedRedis) => fenced.set('wallet:{7}', '100', 5),
  hset: (fenced: FencedRedis) => fenced.hset('account:{7}', { balance: 100 }, 5),
  get: (fenced: FencedRedis) => fenced.get('wallet:{7}', 5),
  hget: (fenced: FencedRedis) => fenced.hget('account:{7}', 'balance', 5),
};

/** Each fenced write and read for update through a client of `name` on `url`, rejected as `refusal` and `remedy` say. */
async function expectRefusedForGood(name: string, url: string, refusal: RegExp, remedy: RegExp, admin: Redis): Promise<void> {
  const opened = await CLIENTS_ON_URL[name as keyof typeof CLIENTS_ON_URL](url);
  try {
    const fenced = new FencedRedis(opened.client as never);
    for (const [method, call] of Object.entries(CALLS)) {
      const error = await call(fenced).then(
        () => new Error('resolved'),
        (refused: unknown) => refused as Error,
      );
      // Failed: the client's bare reply error, no RedisLockError.
      expect(error, `${name} ${method}: ${error.message}`).toBeInstanceOf(RedisLockError);
      expect(error, method).not.toBeInstanceOf(RedisUnavailableError);
      const key = method === 'set' || method === 'get' ? 'wallet' : 'account';
      expect(error.message, method).toMatch(
        new RegExp(`^FencedRedis\\.${method}\\(\\): Redis refused the (write to|read for update of) "${key}:\\{7\\}" \\(.+\\), so nothing was (written|claimed or read): `),
      );
      expect(error.message, method).toMatch(refusal);
      expect(error.message, method).toMatch(remedy);
      expect(String((error.cause as Error | undefined)?.message), method).toMatch(refusal);
    }
    // Nothing written, no token kept.
    expect(await admin.exists('wallet:{7}', 'account:{7}', '{7}:fence')).toBe(0);
  } finally {
    await opened.close();
  }
}

describe('FencedRedis through a Redis user without the commands or keys it needs (NOPERM)', () => {
  const server = useOwnServer();
  const user = useAclUser(server, 'fenced');

  it.each(Object.keys(CLIENTS_ON_URL))('%s: without EVALSHA and EVAL, each write and read for update rejects with a RedisLockError saying to grant them', async (name) => {
    await user.rules('-evalsha', '-eval');
    await expectRefusedForGood(name, user.url(), /NOPERM|no permissions/i, /\+evalsha \+eval \+get \+set \+hget \+hset on the data keys and their \{\.\.\.\}:fence hashes/, server.admin());
  });

  it.each(Object.keys(CLIENTS_ON_URL))('%s: without the token hash among its keys, each rejects so, naming the hash', async (name) => {
    await user.rules('resetkeys', '~wallet:*', '~account:*');
    await expectRefusedForGood(name, user.url(), /NOPERM|no permissions|can't access/i, /"\{7\}:fence"[\s\S]*\+evalsha/, server.admin());
  });
});

describe('FencedRedis on a Redis at its maxmemory, noeviction (OOM)', () => {
  const server = useOwnServer(['--maxmemory-policy', 'noeviction']);

  it.each(Object.keys(CLIENTS_ON_URL))('%s: each write and read for update rejects with a RedisLockError saying to free memory or raise maxmemory', async (name) => {
    await server.admin().config('SET', 'maxmemory', '1');
    try {
      await expect(server.admin().set('probe', 'x')).rejects.toThrow(/OOM/);
      await expectRefusedForGood(name, server.url(), /OOM|maxmemory/, /maxmemory/, server.admin());
    } finally {
      await server.admin().config('SET', 'maxmemory', '0');
    }
  });
});

describe('FencedRedis on a server that does not know EVALSHA (rename-command)', () => {
  const server = useOwnServer(['--rename-command', 'EVALSHA', '']);

  // GLIDE sends a script's first call as EVAL (loading it meanwhile), which this server runs.
  it.each(Object.keys(CLIENTS_ON_URL).filter((name) => name !== 'GLIDE'))('%s: each write and read for update rejects with a RedisLockError saying to give it its name back', async (name) => {
    await expectRefusedForGood(name, server.url(), /unknown command/i, /rename-command/, server.admin());
  });
});

describe('FencedRedis on a server that answers EVALSHA NOSCRIPT and does not know EVAL (rename-command)', () => {
  const server = useOwnServer(['--rename-command', 'EVAL', '']);

  // GLIDE's first call of a script is an EVAL: refused so too.
  it.each(Object.keys(CLIENTS_ON_URL))('%s: each write and read for update rejects with a RedisLockError saying to give it its name back', async (name) => {
    await expectRefusedForGood(name, server.url(), /unknown command/i, /rename-command/, server.admin());
  });
});
