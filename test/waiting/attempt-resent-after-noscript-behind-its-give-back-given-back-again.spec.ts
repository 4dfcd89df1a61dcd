/**
 * Review suspicion (s45, cleared): an attempt sent as EVALSHA to a server that lost its scripts
 * (a restart, `SCRIPT FLUSH`) is answered NOSCRIPT and sent again as EVAL a round trip later,
 * behind whatever the process sent meanwhile on that connection. A give-back of the same token
 * sent in between, whose own script the server had cached again (another client's EVAL of it),
 * runs first and finds nothing; the resent attempt then takes the lock for a token nobody holds
 * or renews, and every caller of the key would wait a whole ttl (30 s here).
 *
 * It cannot happen outside quorum mode, and this spec shows why on the wire. A call's attempts go
 * one at a time, each awaited until its store promise settles, and that promise settles only
 * with the reply of the EVAL resend (`sendBare`, `RedisDriver.evalScript`). Only three ends of a
 * call stop waiting for an attempt still on its way: the caller's abort, an attempt unanswered
 * within its bound (which reaches the end of the wait: the call is over) and shutdown. Each gives
 * the token back at once and again once that attempt has settled (`LockManager.leave`'s `after`),
 * behind the resend. The other give-backs, after which a call goes on under a new token (a grant
 * whose renewal before its handover was refused, a reply that came after its lease), follow an
 * attempt that has settled: no attempt of the old token is left on its way.
 *
 * A proxy holds the process's commands while the test empties the script cache and loads the
 * leave script alone; the attempt then meets NOSCRIPT and the first leave runs before the resend.
 * Without the second leave (checked by removing it), the lock stayed held by the departed
 * caller's token for its ttl, and the spec failed with:
 *   expected 1 to be +0 // Object.is equality (the lock key, polled for 10 s)
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../lib/core/stores/redis/lock-lua.js';
import type { LockApp } from '../support/lock-app.js';
import { isScriptCall, lockScriptKind, watchCommands } from '../support/monitor.js';
import { useProxiedLockApps } from '../support/proxied-lock-apps.js';
import { useOwnRedis } from '../support/redis.js';

type Call = (locks: LockApp['locks'], key: string) => Promise<unknown>;

const CALLS: [string, Call][] = [
  [
    'acquire() aborted by its signal',
    (locks, key) => {
      const controller = new AbortController();
      const call = locks.acquire(key, { waitTimeout: 10_000, signal: controller.signal });
      controller.abort(new Error('gave up'));
      return call;
    },
  ],
  // Its only attempt is unanswered for the whole wait (at least the last attempt's grace, 1 s).
  ['acquire() whose wait ran out', (locks, key) => locks.acquire(key, { waitTimeout: 100 })],
  ['tryAcquire() unanswered within its bound', (locks, key) => locks.tryAcquire(key)],
];

describe('a give-back that Redis runs before its attempt, resent as EVAL after NOSCRIPT', () => {
  const own = useOwnRedis();
  const apps = useProxiedLockApps(() => own.url());

  it.each(CALLS)('is sent again after that resend: %s', async (_, call) => {
    const { app, proxy } = await apps.throughProxy();
    // Every lock script cached: each call below starts as EVALSHA.
    await (await app.locks.acquire('warm-up'))!.release();
    const key = 'departed';
    const lock = `lock:{${key}}`;
    const watch = await watchCommands(lock, own.url());
    try {
      proxy.cut();
      const ended = await call(app.locks, key).then(
        () => 'resolved',
        (error: unknown) => (error as Error).message,
      );
      expect(ended).not.toBe('resolved');
      // The cache emptied while the attempt and the first give-back were on their way, and the
      // leave script loaded again (by another client's EVAL of it, say): the leave runs as sent.
      await own.redis().script('FLUSH');
      await own.redis().script('LOAD', COMMANDS.leave.lua);
      proxy.heal();
      const order = () => watch.seen.filter(isScriptCall).map((command) => `${lockScriptKind(command)} ${command.args[0]!.toUpperCase()}`);
      await expect.poll(order).toContain('acquire EVAL');
      // The resend took the lock for the departed caller; the leave sent after its reply gave it back.
      await expect.poll(() => own.redis().exists(lock, `${lock}:queue`, `${lock}:waiters`)).toBe(0);
      expect(order()).toEqual(['acquire EVALSHA', 'leave EVALSHA', 'acquire EVAL', 'leave EVALSHA']);
    } finally {
      await watch.stop();
    }
    // Nobody holds it in Redis: another process takes it at once.
    const other = await apps.open();
    const taken = await other.locks.tryAcquire(key);
    expect(taken).not.toBeNull();
    await taken!.release();
  });
});
