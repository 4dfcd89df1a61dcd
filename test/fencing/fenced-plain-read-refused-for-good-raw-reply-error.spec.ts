import { describe, expect, it } from 'vitest';
import { FencedRedis, RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { CLIENTS_ON_URL } from '../support/clients-on-url.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * docs/fencing.md, "Redis: FencedRedis": a plain read (`get(key)`, `hget(key, field)`, no token)
 * and `fence(key)` that Redis refused in a way asking again does not cure (a Redis user without
 * `EVALSHA`/`EVAL` or without the key, `NOPERM`; a server that does not know `EVALSHA` or `EVAL`,
 * renamed with `rename-command`) reject with a `RedisLockError` naming the call, the key and what
 * to fix, the client's error as its `cause`, as the fenced writes and reads for update do
 * (test/fencing/fenced-write-refused-for-good-raw-reply-error.spec.ts).
 *
 * Found by review (session 50): they rejected with the client's bare reply (`NOPERM User ... has
 * no permissions to run the 'evalsha' command`, `ERR unknown command 'evalsha'`), no
 * `RedisLockError`, naming neither the key nor the remedy.
 */

const CALLS = {
  get: (fenced: FencedRedis) => fenced.get('wallet:{7}'),
  hget: (fenced: FencedRedis) => fenced.hget('account:{7}', 'balance'),
  fence: (fenced: FencedRedis) => fenced.fence('wallet:{7}'),
};

/** Each plain read and fence() through a client of `name` on `url`, rejected as `refusal` and `remedy` say. */
async function expectRefusedForGood(name: string, url: string, refusal: RegExp, remedy: RegExp, calls: (keyof typeof CALLS)[] = ['get', 'hget', 'fence']): Promise<void> {
  const opened = await CLIENTS_ON_URL[name as keyof typeof CLIENTS_ON_URL](url);
  try {
    const fenced = new FencedRedis(opened.client as never);
    for (const method of calls) {
      const error = await CALLS[method](fenced).then(
        () => new Error('resolved'),
        (refused: unknown) => refused as Error,
      );
      // Failed: the client's bare reply error, no RedisLockError.
      expect(error, `${name} ${method}: ${error.message}`).toBeInstanceOf(RedisLockError);
      expect(error, method).not.toBeInstanceOf(RedisUnavailableError);
      const key = method === 'hget' ? 'account' : 'wallet';
      expect(error.message, method).toMatch(
        new RegExp(`^FencedRedis\\.${method}\\(\\): Redis refused the read of ${method === 'fence' ? 'the fencing token of ' : ''}"${key}:\\{7\\}" \\(.+\\): `),
      );
      expect(error.message, method).toMatch(refusal);
      expect(error.message, method).toMatch(remedy);
      expect(String((error.cause as Error | undefined)?.message), method).toMatch(refusal);
    }
  } finally {
    await opened.close();
  }
}

describe('FencedRedis plain reads and fence() through a Redis user without the commands or keys they need (NOPERM)', () => {
  const server = useOwnServer();
  const user = useAclUser(server, 'fenced-read');

  it.each(Object.keys(CLIENTS_ON_URL))('%s: without EVALSHA and EVAL, each rejects with a RedisLockError saying to grant them', async (name) => {
    await user.rules('-evalsha', '-eval');
    await expectRefusedForGood(name, user.url(), /NOPERM|no permissions/i, /\+evalsha \+eval \+get \+set \+hget \+hset on the data keys and their \{\.\.\.\}:fence hashes/);
  });

  it.each(Object.keys(CLIENTS_ON_URL))('%s: without the key, get() and hget() reject so, naming the key', async (name) => {
    await user.rules('resetkeys', '~{7}:fence');
    await expectRefusedForGood(name, user.url(), /NOPERM|no permissions|can't access/i, /may not run a command it needs or touch "(wallet|account):\{7\}"[\s\S]*\+evalsha/, ['get', 'hget']);
  });

  it.each(Object.keys(CLIENTS_ON_URL))('%s: without the token hash, fence() rejects so, naming the hash', async (name) => {
    await user.rules('resetkeys', '~wallet:*');
    await expectRefusedForGood(name, user.url(), /NOPERM|no permissions|can't access/i, /"\{7\}:fence"[\s\S]*\+evalsha/, ['fence']);
  });

  it.each(Object.keys(CLIENTS_ON_URL))('%s: without GET and HGET (refused inside the read script), each rejects so', async (name) => {
    await user.rules('-get', '-hget');
    await expectRefusedForGood(name, user.url(), /NOPERM|no permissions|can't run/i, /\+evalsha \+eval \+get/);
  });
});

describe('FencedRedis plain reads and fence() on a server that does not know EVALSHA (rename-command)', () => {
  const server = useOwnServer(['--rename-command', 'EVALSHA', '']);

  // GLIDE sends a script's first call as EVAL (loading it meanwhile), which this server runs.
  it.each(Object.keys(CLIENTS_ON_URL).filter((name) => name !== 'GLIDE'))('%s: each rejects with a RedisLockError saying to give it its name back', async (name) => {
    await expectRefusedForGood(name, server.url(), /unknown command/i, /rename-command/);
  });
});

describe('FencedRedis plain reads and fence() on a server that answers EVALSHA NOSCRIPT and does not know EVAL (rename-command)', () => {
  const server = useOwnServer(['--rename-command', 'EVAL', '']);

  // GLIDE's first call of a script is an EVAL, refused so too; it loads the script meanwhile, so
  // its next call of that script (hget()'s and fence()'s are one) is an EVALSHA the server runs.
  it.each(Object.keys(CLIENTS_ON_URL))('%s: each rejects with a RedisLockError saying to give it its name back', async (name) => {
    await expectRefusedForGood(name, server.url(), /unknown command/i, /rename-command/, name === 'GLIDE' ? ['get', 'fence'] : undefined);
  });
});
