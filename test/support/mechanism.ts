import type { Lock, LockService } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';

type Attempt = (...args: unknown[]) => Promise<unknown>;

export interface AttemptCounter {
  /** Acquire attempts made since `countAttempts`. */
  readonly count: number;
  /**
   * Settles when the application's release subscriptions are active and the next attempt after
   * that has been answered. A waiter then sleeps a whole refresh interval (250 ms) before it
   * polls again: a release sent right after reaches a live subscription and is not raced by a
   * poll (on a loaded machine a subscription can take longer than a refresh to come up, and the
   * waiter polls meanwhile, by design).
   */
  answered(): Promise<void>;
  stop(): void;
}

/**
 * Counts the acquire attempts (acquire script calls, or their in-memory equivalent) one
 * application makes, from now on. A waiter woken by a release (the release message, or the
 * local handoff) holds the lock without another attempt; a waiter that found the lock by
 * polling made one. So "no attempt between the release and the acquisition" proves which path
 * woke it whatever the machine's load, where a millisecond bound proves only a quiet machine.
 */
export function countAttempts(locks: LockService): AttemptCounter {
  const manager = locks[LOCK_RUNNER] as unknown as { attempt: Attempt; notifier?: { channels: Map<string, unknown> } };
  const original = manager.attempt;
  let count = 0;
  let onAnswer: (() => void)[] = [];
  manager.attempt = function (this: unknown, ...args: unknown[]) {
    count++;
    const reply = original.apply(this, args);
    const settled = (): void => {
      const waiting = onAnswer;
      onAnswer = [];
      for (const resolve of waiting) resolve();
    };
    reply.then(settled, settled);
    return reply;
  };
  return {
    get count() {
      return count;
    },
    async answered() {
      // A ReleaseNotifier's channels carry a `ready` promise; the in-memory one subscribes at once.
      const channels = [...(manager.notifier?.channels.values() ?? [])] as { ready?: Promise<void> }[];
      await Promise.all(channels.map((channel) => channel.ready?.catch(() => undefined)));
      await new Promise<void>((resolve) => onAnswer.push(resolve));
    },
    stop() {
      delete (manager as Partial<typeof manager>).attempt;
    },
  };
}

/**
 * The engine's deadline for a held lock's current lease, on the monotonic clock that
 * `performance.now()` reads: counted from before its acquire (or last renewal) was sent, minus
 * a drift margin, so the store cannot have let the lease go before it. A check "not before the
 * lease ran out" compares against it instead of against wall-clock milliseconds.
 */
export const leaseDeadline = (lock: Lock): number => (lock as unknown as { deadline: number }).deadline;
