import { describe, expect, it } from 'vitest';
import type { Lock, LockService } from '../lib/index.js';
import { LOCK_RUNNER } from '../lib/redis-lock.constants.js';
import { countAttempts, holdPolls, recordWakes } from './support/mechanism.js';
import { sleep, useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';
import { COMMANDS } from '../lib/core/stores/redis/lock-lua.js';
import { BARGING_RACES_BEFORE_QUEUE } from '../lib/core/engine/fairness.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;

/** Wraps the manager's acquire attempts: `each(token)` runs right after each attempt has been sent. */
function afterEachAttempt(locks: LockService, each: (token: string) => void): { tokens: string[] } {
  const manager = locks[LOCK_RUNNER] as unknown as { attempt: Attempt };
  const original = manager.attempt;
  const tokens: string[] = [];
  manager.attempt = function (this: unknown, ...args: unknown[]) {
    const reply = original.apply(this, args);
    tokens.push(args[2] as string);
    each(args[2] as string);
    return reply;
  };
  return { tokens };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));


/**
 * A barging waiter of a process that gives up passes the wake-up on to another waiter of the
 * process on the key: it may have been the one a freed-lock message woke, or the one that told
 * Redis the process waits (`wanted`). The waiters' polls are held, so only a wake-up serves them.
 */
describe('a barging waiter that gives up', () => {
  const admin = useRedis();
  const app = useLockApps();

  it('while the attempt its wake-up sent is in flight passes the wake-up on to the other waiter of its process', async () => {
    const holder = await app({ fairness: 'barging' });
    const waiters = await app({ fairness: 'barging' });
    const k = 'review-aborted-racer';
    await (await holder.locks.acquire(k)).release();
    await nextTurn();
    const held = await holder.locks.acquire(k);

    // Polls held: whatever a waiter does after the release, a release (message or pass-on) made it.
    holdPolls(waiters.locks);
    const wakes = recordWakes(waiters.locks);
    const attempts = countAttempts(waiters.locks);

    // W1 waits first (it is the one the release message wakes), then W2.
    const first = new AbortController();
    const w1 = waiters.locks.acquire(k, { waitTimeout: 20_000, signal: first.signal });
    w1.catch(() => undefined);
    await attempts.listening();
    const w2 = waiters.locks.acquire(k, { waitTimeout: 20_000 });
    let w2Lock: Lock | undefined;
    void w2.then((lock) => (w2Lock = lock), () => undefined);
    // Both W1 and W2 have made their attempts (two each at most) and sleep.
    await sleep(300);
    await attempts.listening();
    const before = [...wakes.steps];

    // The caller of W1 gives up while the attempt its wake-up sent is in flight.
    let armed = true;
    const log = afterEachAttempt(waiters.locks, () => {
      if (!armed) return;
      armed = false;
      first.abort(new Error('caller went away'));
    });
    await held.release();
    await expect(w1).rejects.toThrow('caller went away');
    // Let the leave W1 sent after its reply run.
    await sleep(300);

    // W1's racing attempt may have taken the lock in Redis; its leave gave it back. W2 was woken
    // by W1's giving up (polls held: nothing else could wake it), attempted and holds the lock.
    // Without the pass-on W2 would sleep on: the release's '*' went to W1 alone, and W1's leave
    // publishes '*' only for a process that said since that it waits, which W2 does only by
    // attempting (a third 'freed' when that attempt came before the leave).
    await sleep(1_000);
    expect(wakes.steps.slice(before.length).filter((step) => step === 'freed').length).toBeGreaterThanOrEqual(2);
    expect(log.tokens.length).toBeGreaterThanOrEqual(2);
    expect(w2Lock?.held, `W2 still asleep with the lock free; steps after release: ${JSON.stringify(wakes.steps.slice(before.length))}, attempts after release: ${log.tokens.length}`).toBe(true);
    await w2Lock?.release();
  });

  // The greedy caller here is another process (a plain client running the library's own
  // scripts): each of its releases is followed on its connection by its next acquire, so every
  // release frees the lock to the barging waiters and it then takes the lock first.
  it('after it queued (it lost its races) wakes the other waiter of its process, whom Redis no longer knows of', async () => {
    const waiters = await app({ fairness: 'barging' });
    const k = 'review-queued-gives-up';
    const lockKey = `lock:{${k}}`;
    let greedyToken = 'greedy-0';
    let n = 0;
    const take = async (): Promise<boolean> => {
      const token = `greedy-${++n}`;
      const reply = await admin.eval(COMMANDS.acquireOneKey.lua, 1, lockKey, token, '30000', '0:1000:0:0');
      if (typeof reply !== 'number') return false;
      greedyToken = token;
      return true;
    };
    const release = () => admin.eval(COMMANDS.releaseOneKey.lua, 1, lockKey, greedyToken, '0:1000:0');
    expect(await take()).toBe(true);
    await (await waiters.locks.acquire('review-warmup-2')).release();

    holdPolls(waiters.locks);
    const wakes = recordWakes(waiters.locks);
    const attempts = countAttempts(waiters.locks);
    const first = new AbortController();
    const w1 = waiters.locks.acquire(k, { waitTimeout: 20_000, signal: first.signal });
    w1.catch(() => undefined);
    await attempts.listening();
    const w2 = waiters.locks.acquire(k, { waitTimeout: 20_000 });
    let w2Lock: Lock | undefined;
    void w2.then((lock) => (w2Lock = lock), () => undefined);
    await sleep(100);
    await attempts.listening();

    // The greedy process wins three races in a row: W1 (woken each time) lost two and queued.
    for (let round = 0; round < BARGING_RACES_BEFORE_QUEUE + 1; round++) {
      for (let i = 0; i < 600 && (await admin.exists(`${lockKey}:wanted`)) === 0; i++) await sleep(5);
      const released = release();
      expect(await take()).toBe(true);
      await released;
      for (let i = 0; i < 600 && wakes.steps.filter((step) => step === 'freed').length < round + 1; i++) await sleep(5);
      await attempts.listening();
    }
    for (let i = 0; i < 600 && !wakes.steps.includes('queued'); i++) await sleep(5);
    expect(wakes.steps.at(-1)).toBe('queued');
    expect(await admin.llen(`${lockKey}:queue`)).toBe(1);

    // W1's caller gives up while it waits in the queue; then the greedy process releases for good.
    first.abort(new Error('caller went away'));
    await expect(w1).rejects.toThrow('caller went away');
    await sleep(200);
    const steps = wakes.steps.length;
    await release();
    await sleep(1_000);
    expect(w2Lock?.held, `the lock is free and W2 sleeps: steps after the release ${JSON.stringify(wakes.steps.slice(steps))}, wanted=${await admin.exists(`${lockKey}:wanted`)}`).toBe(true);
    await w2Lock?.release();
  });
});
