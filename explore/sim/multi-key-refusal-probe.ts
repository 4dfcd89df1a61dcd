import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import { LockNotAcquiredError } from '../../lib/errors/lock-not-acquired.error.js';
import { RedisLockError } from '../../lib/errors/redis-lock.error.js';
import type { Lock } from '../../lib/interfaces/lock.interface.js';
import { settleCall, SETTLE_MS } from './settle-call.js';
import type { Instance, World } from './world.js';

/** The multi-key call's keys, in their canonical order: the first taken, the one another caller holds. */
const FIRST = 'mka';
const LATER = 'mkb';
/** The call's ttl and watchdog (an interval of its own: a script refused is refused whole), and its wait. */
const TTL_MS = 600;
const RENEW_MS = 130;
const WAIT_MS = 10_000;
/** The later key's holder: no renewal of it due while the probe runs. */
const HOLDER_TTL_MS = 5_000;

/** The held locks of `instance`'s engine. */
function heldLocks(instance: Instance): HeldLock[] {
  return [...(instance.service as unknown as { manager: { heldLocks: Set<HeldLock> } }).manager.heldLocks];
}

/**
 * docs/lock-family.md, "All or nothing": a multi-key `acquire()` whose key, taken first, Redis
 * refuses to renew for good while the call waits for a later key (an ACL changed under the
 * application: NOPERM; a client handed in closed by its owner) ends at that refusal with a
 * `RedisLockError` saying what to fix, every key given back (64af5b1d, 0a229df1: it went on
 * waiting for the later key until it had it or its wait ran out, with no bound for a
 * `waitTimeout` of Infinity, and then failed as that key busy). The drawn faults refuse nothing
 * for good, and the refused-for-good probe's calls take one key. The second live instance Y holds
 * `mkb`; the first, X, calls acquire(['mka', 'mkb']) with a 10 s wait, takes `mka` and waits for
 * `mkb`; the ACL then refuses `mka` to X, whose next watchdog renewal is refused: the call must
 * end within a renewal and its reply, with a RedisLockError that is no LockNotAcquiredError, `mkb`
 * still Y's. After the faults; draws nothing from the random streams.
 */
export async function multiKeyRefusalProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const [x, y] = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  if (x === undefined || y === undefined) return;
  let later: Lock | undefined;
  const call: { lock?: Lock; outcome?: unknown; settled?: true } = {};
  try {
    later = await settleCall(world, y.service.acquire(LATER, { ttl: HOLDER_TTL_MS }), check, stop);
    if (later === undefined || world.violation) return;
    x.service
      .acquire([FIRST, LATER], { ttl: TTL_MS, renewInterval: RENEW_MS, waitTimeout: WAIT_MS })
      .then(
        (lock) => {
          call.lock = lock;
          call.outcome = 'acquired';
          void lock.release().catch(() => undefined);
        },
        (error: unknown) => (call.outcome = error),
      )
      .finally(() => (call.settled = true));
    await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS, check, () => stop() || call.settled === true);
    const first = heldLocks(x).find((lock) => lock.key === FIRST && lock.held);
    // The shape did not form: the call ended, or has not taken its first key.
    if (world.violation || call.settled === true || first === undefined || !later.held) return;
    world.acl.set(FIRST, { who: x, refused: [] });
    const refusedAt = world.scheduler.now;
    world.trace(x, `multi-key refusal probe: the ACL refuses ${FIRST} to ${x.name} while its call waits for ${LATER}`);
    await world.scheduler.run(refusedAt + RENEW_MS + 4 * SETTLE_MS, check, () => stop() || call.settled === true);
    world.acl.delete(FIRST);
    if (world.violation || !x.alive || x.paused || !y.alive || y.paused) return;
    const { outcome } = call;
    if (call.settled !== true || !(outcome instanceof RedisLockError) || outcome instanceof LockNotAcquiredError) {
      world.violate(x, 'a multi-key call whose key taken first Redis refuses to renew for good ends at that refusal, with a RedisLockError',
        `[${FIRST}, ${LATER}]: ${FIRST} refused at ${refusedAt} ms (its lock ${first.held ? 'still held' : `lost: ${String((first.signal.reason as Error | undefined)?.message)}`}), ${LATER} held by ${y.name}; the call ${call.settled === true ? `ended: ${describe(outcome)}` : `still waiting at ${world.scheduler.now} ms`}`);
      return;
    }
  } finally {
    world.acl.delete(FIRST);
    if (later !== undefined) void later.release().catch(() => undefined);
  }
  await world.scheduler.run(world.scheduler.now + 2 * SETTLE_MS, check, () => stop() || call.settled === true);
}

function describe(outcome: unknown): string {
  if (outcome === undefined) return 'nothing';
  return outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : String(outcome);
}
