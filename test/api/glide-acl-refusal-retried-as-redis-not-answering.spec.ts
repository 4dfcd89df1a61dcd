import { GlideClient } from '@valkey/valkey-glide';
import type { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockNotAcquiredError, RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { countAttempts } from '../support/mechanism.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * Found by a defect hunt (drivers). Valkey GLIDE names Redis' NOPERM its own way: "An error was
 * signalled by the server: - PermissionDenied: this user has no permissions to run the 'evalsha'
 * command" (or "... to access one of the keys used as arguments"), without the word NOPERM, which
 * the check for a refusal asking again cannot change looked for. So on GLIDE an ACL user without
 * EVALSHA and EVAL, or without the lock's key pattern, was taken for Redis not answering:
 * acquire() attempted again until its waitTimeout ran out, then failed with LockNotAcquiredError
 * ("Redis did not answer"), and tryAcquire() said only "Redis could not be asked", naming neither
 * the ACL nor the cure, as ioredis, iovalkey and node-redis do. Counted by attempts, not by time.
 */
describe('a Valkey GLIDE client whose ACL user Redis refuses a lock', () => {
  const server = useOwnServer();
  const user = useAclUser(server, 'glide-refused');

  async function glideApp(): Promise<LockApp> {
    const url = new URL(user.url());
    const client = await GlideClient.createClient({
      addresses: [{ host: url.hostname, port: Number(url.port) }],
      credentials: { username: decodeURIComponent(url.username), password: 'pw' },
      requestTimeout: 2_000,
    });
    onTestFinished(() => client.close());
    const app = await createLockApp({ redis: client as never, shutdownTimeout: 2_000 });
    onTestFinished(() => app.close());
    return app;
  }

  it.each([
    ['without EVALSHA and EVAL', ['-evalsha', '-eval']],
    ["without the lock's key pattern", ['resetkeys', '~other:*']],
  ])('%s: ends acquire() at its first refusal, and each call names the ACL', { timeout: 20_000 }, async (_what, rules) => {
    const app = await glideApp();
    await (await app.locks.acquire('glide-acl-warm')).release();
    await user.rules(...rules);
    const attempts = countAttempts(app.locks);
    const error = await app.locks.acquire('glide-acl-refused', { waitTimeout: 4_000 }).then(
      (lock) => lock,
      (caught: unknown) => caught,
    );
    attempts.stop();
    // Failed: 50 and more attempts in the 4 s wait, then LockNotAcquiredError ("Redis did not answer").
    expect(attempts.count, String(error)).toBe(1);
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toMatch(/PermissionDenied[\s\S]*ACL/);
    expect(await (server.admin() as Redis).keys('lock:{glide-acl-refused}*')).toEqual([]);
    // Failed: tryAcquire("glide-acl-refused"): Redis could not be asked (An error was signalled by the server: - PermissionDenied: ...).
    const tried = await app.locks.tryAcquire('glide-acl-refused').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(tried).toBeInstanceOf(RedisLockError);
    expect(tried).not.toBeInstanceOf(RedisUnavailableError);
    expect((tried as Error).message).toMatch(/grant that user's ACL/);
  });
});
