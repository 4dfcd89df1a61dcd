import type { Redis } from 'ioredis';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { isScriptCall, watchCommands } from '../support/monitor.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * Found by review (drivers). ioredis puts the command a reply error answers on the error
 * (`command: { name, args }`), and the library keeps the client's error as its own error's
 * `cause`: `console.error(error)`, `util.inspect` and pino's or winston's error serializers print
 * a cause's own properties. For a lock script the arguments hold the lock's owner token (whoever
 * reads it can release or extend the lock); for a refused login (WRONGPASS), which ioredis hands
 * to every command queued meanwhile, the user name and password. Any refusal showed them: an ACL
 * user without the lock's keys (NOPERM), a Redis out of memory (OOM), a failover's READONLY. The
 * arguments are left out now; the command's name and how many arguments it had stay.
 */
describe("a driver's error kept as a lock call's cause", () => {
  const own = useOwnServer();
  const admin = (): Redis => own.admin();

  /** The error a lock call on `key` failed with, and the arguments of the scripts it sent. */
  async function failedCall(app: LockApp, key: string, waitTimeout: number): Promise<{ error: unknown; sent: string[] }> {
    const monitor = await watchCommands(key, own.url(), (arg) => arg.includes(key));
    const error = await app.locks.acquire(key, { waitTimeout }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    await monitor.stop();
    const sent = monitor.seen.filter(isScriptCall).flatMap((command) => command.args.slice(3));
    return { error, sent };
  }

  /** An owner token: the process's random id, its host and pid, and the lock's number in it. */
  const OWNER_TOKEN = /[0-9a-f]{32}\.[\w-]+\.[\w-]+/;

  /** What a log line, console.error or a logging library's serializer would print of it. */
  const printed = (error: unknown, app: LockApp): string => `${inspect(error, { depth: 10 })}\n${app.logs.lines.map((line) => line.message).join('\n')}`;

  /**
   * What is printed of the error of an acquire() on `key` by a lock app that logs in as `user`
   * with `password`, a user of the test's own with the ACL `rules`.
   */
  async function printedAs(user: string, password: string, rules: string[], key: string, waitTimeout: number): Promise<{ error: unknown; text: string }> {
    await admin().call('ACL', 'SETUSER', user, 'on', ...rules);
    const url = new URL(own.url());
    url.username = user;
    url.password = password;
    const app = await createLockApp({ redis: url.toString() });
    try {
      const error = await app.locks.acquire(key, { waitTimeout }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      return { error, text: printed(error, app) };
    } finally {
      await app.close();
      await admin().call('ACL', 'DELUSER', user);
    }
  }

  it('leaves out the owner token of a script Redis refused (NOPERM: an ACL user without the lock key)', { timeout: 20_000 }, async () => {
    const { error, text } = await printedAs('keyless', 'pw', ['>pw', '~other:*', '&*', '+@all'], 'redact:noperm', 0);
    expect(error).toBeInstanceOf(RedisLockError);
    // MONITOR does not list a command the ACL refused: the token is known by its shape.
    expect(text).toMatch(/NOPERM/);
    expect(text).not.toMatch(OWNER_TOKEN);
    expect(text).toMatch(/name: 'evalsha'[^}]*arguments left out/i);
  });

  it('leaves out the owner token of a script Redis refused for a while (OOM), in LockNotAcquiredError', { timeout: 20_000 }, async () => {
    const app = await createLockApp({ redis: own.url() });
    try {
      await app.locks.isLocked('redact:warm-up');
      await admin().config('SET', 'maxmemory', '1');
      const { error, sent } = await failedCall(app, 'redact:oom', 300);
      await admin().config('SET', 'maxmemory', '0');
      expect(error).toBeInstanceOf(RedisLockError);
      const text = printed(error, app);
      expect(text).toMatch(/OOM/);
      const token = sent.find((arg) => OWNER_TOKEN.test(arg));
      expect(token, sent.join(' ')).toBeDefined();
      expect(text).not.toContain(token);
    } finally {
      await admin().config('SET', 'maxmemory', '0');
      await app.close();
    }
  });

  it("leaves out the owner token of a semaphore holder's release Redis refused (HDEL, its entry named by the token)", { timeout: 20_000 }, async () => {
    // A holder alone is released by an HDEL of its entry, whose field is its token: not a script.
    await admin().call('ACL', 'SETUSER', 'nohdel', 'on', '>pw', '~*', '&*', '+@all', '-hdel');
    const url = new URL(own.url());
    url.username = 'nohdel';
    url.password = 'pw';
    const app = await createLockApp({ redis: url.toString() });
    try {
      const monitor = await watchCommands('redact:permit', own.url(), (arg) => arg.includes('redact:permit'));
      const lock = await app.locks.acquire('redact:permit', { limit: 3 });
      await monitor.stop();
      const token = monitor.seen.filter(isScriptCall).flatMap((command) => command.args.slice(3)).map((arg) => OWNER_TOKEN.exec(arg)?.[0]).find((found) => found !== undefined);
      expect(token).toBeDefined();
      const error = await lock.release().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RedisLockError);
      const text = printed(error, app);
      expect(text).toMatch(/NOPERM/);
      expect(text).not.toContain(token);
    } finally {
      await app.close();
      await admin().call('ACL', 'DELUSER', 'nohdel');
    }
  });

  it('leaves out the password of a refused login (WRONGPASS)', { timeout: 20_000 }, async () => {
    const { error, text } = await printedAs('rotated', 'stale-secret-password', ['>right-password', '~*', '&*', '+@all'], 'redact:login', 500);
    expect(error).toBeInstanceOf(RedisLockError);
    expect(text).toMatch(/WRONGPASS|NOAUTH/);
    expect(text).not.toContain('stale-secret-password');
    expect(text).toMatch(/name: 'auth'[^}]*2 arguments left out/);
  });
});
