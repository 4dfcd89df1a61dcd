import { Controller, Get, type INestApplication } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockLostError, LockNotAcquiredError, LockService, Locked, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import { useAclUser } from '../support/acl-user.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs, createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { settledRecord } from '../support/mechanism.js';
import { useOwnServer } from '../support/own-server.js';

@Controller('transfer')
class TransferController {
  @Get()
  @Locked(['acct:a', 'acct:b'], { waitTimeout: 0 })
  async transfer(): Promise<string> {
    return 'done';
  }
}

/**
 * Found by review of the multi-key layer. A part of a multi-key call taken first and then lost
 * because Redis refused its renewal for good (an ACL changed under the running application:
 * NOPERM; a client handed in that its owner closed), while the call took a later key, ended the
 * call as a busy lock: acquire() rejected with a LockNotAcquiredError without a cause ("another
 * holder kept it", HTTP 409, what an application retries later), tryAcquire() answered null. Such
 * a refusal is the operator's to fix, and asking again changes nothing: one key's acquire refused
 * so rejects with a RedisLockError saying what to fix (a 500 over HTTP, logged). The multi-key
 * call now does too, the part's LockLostError (and through it Redis' refusal) as its cause.
 *
 * The loss is made by the engine's own mechanism at a known point: the ACL user loses the first
 * key's pattern, and its watchdog's renewal is refused, just before the second key's attempt.
 */
describe('a multi-key call whose first part Redis refuses for good while it takes the next', () => {
  const server = useOwnServer();
  const user = useAclUser(server, 'multi-key-refused');
  let app: LockApp | undefined;
  // The first key, whose release Redis refuses too, stays until its lease runs out.
  beforeEach(() => server.admin().flushall());
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Before the first attempt of `acct:b`, `acct:a`'s key pattern is taken from the user and its renewal refused. */
  function refuseFirstPartBeforeSecond(locked: LockApp): { done: () => boolean } {
    const manager = locked.locks[LOCK_RUNNER] as unknown as { attempt: (...args: unknown[]) => Promise<unknown>; heldLocks: Set<HeldLock> };
    const attempt = manager.attempt;
    let done = false;
    manager.attempt = async function (this: unknown, ...args: unknown[]) {
      if (args[0] === 'acct:b' && !done) {
        done = true;
        const a = [...manager.heldLocks].find((lock) => lock.key === 'acct:a')!;
        await user.rules('resetkeys', '~lock:{acct:b}*');
        await expect.poll(() => a.signal.aborted, { timeout: 10_000 }).toBe(true);
        expect((a.signal.reason as LockLostError).cause).toBeInstanceOf(RedisLockError);
      }
      return attempt.apply(this, args);
    };
    return { done: () => done };
  }

  function expectRefusalSaid(error: unknown): void {
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error).not.toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).toContain('acct:a');
    expect((error as Error).message).toMatch(/NOPERM[\s\S]*ACL/);
    const loss = (error as Error).cause as LockLostError;
    expect(loss).toBeInstanceOf(LockLostError);
    expect(loss.reason).toBe('refused');
    expect(loss.cause).toBeInstanceOf(RedisLockError);
  }

  it('acquire(keys) rejects with what to fix, not as a busy lock', { timeout: 30_000 }, async () => {
    app = await createLockApp({ redis: user.url(), ttl: 60_000, renewInterval: 100, shutdownTimeout: 1_000 });
    const hook = refuseFirstPartBeforeSecond(app);
    const error = await app.locks.acquire(['acct:a', 'acct:b'], { waitTimeout: 0 }).then(
      (lock) => lock,
      (caught: unknown) => caught,
    );
    expect(hook.done()).toBe(true);
    expectRefusalSaid(error);
    // The second key, which Redis still lets the user touch, was given back.
    expect(await server.admin().exists('lock:{acct:b}')).toBe(0);
  });

  it('reaches a route as a 500 that Nest logs, as one key refused so does, not as a 409 (busy)', { timeout: 30_000 }, async () => {
    const logs = new CapturedLogs();
    let http: INestApplication | undefined = await createHttpApp(
      { imports: [RedisLockModule.forRoot({ redis: user.url(), ttl: 60_000, renewInterval: 100, shutdownTimeout: 1_000, isGlobal: true })], controllers: [TransferController] },
      { logs, logger: logs },
    );
    try {
      const url = `${await listenOnLoopback(http)}/transfer`;
      const hook = refuseFirstPartBeforeSecond({ locks: http.get(LockService), logs, close: () => Promise.resolve() });
      const response = await fetch(url);
      expect(hook.done()).toBe(true);
      expect(response.status).toBe(500);
      expect(logs.lines.some((line) => line.level === 'error' && /NOPERM[\s\S]*ACL/.test(line.message))).toBe(true);
    } finally {
      await http.close();
      http = undefined;
    }
  });

  /**
   * Found with the above: the log line of the part's loss said "every key is given back, and
   * acquire() takes them again within its wait", which no call does after such a refusal (and
   * tryAcquire() never does), and named the loss only "(refused)", not Redis' refusal.
   */
  it("logs the part's loss as ending the call, with Redis' refusal, not as taken again", { timeout: 30_000 }, async () => {
    app = await createLockApp({ redis: user.url(), ttl: 60_000, renewInterval: 100, shutdownTimeout: 1_000 });
    refuseFirstPartBeforeSecond(app);
    await expect(app.locks.acquire(['acct:a', 'acct:b'], { waitTimeout: 0 })).rejects.toBeInstanceOf(RedisLockError);
    const lines = app.logs.lines.filter((line) => line.message.includes('taken first for a multi-key call'));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).not.toContain('takes them again');
    expect(lines[0]!.message).toMatch(/other keys: Redis refused its renewal for good \(.*NOPERM[\s\S]*ACL/);
  });

  it('tryAcquire(keys) rejects with what to fix, not null (busy)', { timeout: 30_000 }, async () => {
    app = await createLockApp({ redis: user.url(), ttl: 60_000, renewInterval: 100, shutdownTimeout: 1_000 });
    const hook = refuseFirstPartBeforeSecond(app);
    const error = await app.locks.tryAcquire(['acct:a', 'acct:b']).then(
      (lock) => lock,
      (caught: unknown) => caught,
    );
    expect(hook.done()).toBe(true);
    expectRefusalSaid(error);
    expect(await server.admin().exists('lock:{acct:b}')).toBe(0);
  });

  /**
   * Found with the above: a tryAcquire(keys) that gave up on a part lost before its last key was
   * taken (refused for good, or its lease run out during a stall) gave the keys it took back twice:
   * once when it found the loss, and again when the error it threw for it passed through its own
   * catch. The second release was sent (refused again here, warned twice), and the call waited for
   * it too: a Redis that did not answer held the call a second grace.
   */
  it('tryAcquire(keys) gives a key it took back once', { timeout: 30_000 }, async () => {
    app = await createLockApp({ redis: user.url(), ttl: 60_000, renewInterval: 100, shutdownTimeout: 1_000 });
    refuseFirstPartBeforeSecond(app);
    await expect(app.locks.tryAcquire(['acct:a', 'acct:b'])).rejects.toBeInstanceOf(RedisLockError);
    expect(app.logs.lines.filter((line) => line.level === 'warn' && line.message.startsWith('Release of lock "acct:a" failed'))).toHaveLength(1);
  });

  /**
   * Found with the above: a call that waited for a later key held by another caller failed, once
   * its wait ran out, as that key busy, although Redis had refused its first key's renewal for
   * good meanwhile.
   */
  it('acquire(keys) whose wait for a later key runs out rejects with the refusal, not as that key busy', { timeout: 30_000 }, async () => {
    const holder = await createLockApp({ redis: server.url(), shutdownTimeout: 1_000 });
    try {
      app = await createLockApp({ redis: user.url(), ttl: 60_000, renewInterval: 100, shutdownTimeout: 1_000 });
      const b = await holder.locks.acquire('acct:b');
      const call = settledRecord(app.locks.acquire(['acct:a', 'acct:b'], { waitTimeout: 2_000 }));
      while ((await holder.locks.inspect('acct:b')).waiters < 1) await sleep(10);
      await user.rules('resetkeys', '~lock:{acct:b}*');
      await expect.poll(() => call.settled).toBeDefined();
      expect(b.held).toBe(true);
      expectRefusalSaid(call.settled!.error);
      expect((await holder.locks.inspect('acct:b')).waiters).toBe(0);
      await b.release();
    } finally {
      await holder.close();
    }
  });

  /**
   * Found with the above: the call went on waiting for that later key, held by another caller,
   * until it had it or its wait ran out (with no bound, as long as the other holder kept it),
   * although asking again cannot change a refusal for good. It ends at the refusal now, the
   * later key still held by the other caller and its wait far from over.
   */
  it('acquire(keys) waiting for a later key ends at the refusal, not when that wait ends', { timeout: 30_000 }, async () => {
    const holder = await createLockApp({ redis: server.url(), shutdownTimeout: 1_000 });
    try {
      app = await createLockApp({ redis: user.url(), ttl: 60_000, renewInterval: 100, shutdownTimeout: 1_000 });
      const b = await holder.locks.acquire('acct:b');
      const call = settledRecord(app.locks.acquire(['acct:a', 'acct:b'], { waitTimeout: Infinity }));
      while ((await holder.locks.inspect('acct:b')).waiters < 1) await sleep(10);
      await user.rules('resetkeys', '~lock:{acct:b}*');
      await expect.poll(() => call.settled).toBeDefined();
      expect(b.held).toBe(true);
      expectRefusalSaid(call.settled!.error);
      expect((await holder.locks.inspect('acct:b')).waiters).toBe(0);
      await b.release();
    } finally {
      await holder.close();
    }
  });
});
