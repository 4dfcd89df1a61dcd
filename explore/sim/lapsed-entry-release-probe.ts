import { WAITER_LEASE_MS } from '../../lib/core/engine/waiter-timing.js';
import type { SemaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { liveValue } from '../../lib/core/stores/memory/memory-data.js';
import type { Lock } from '../../lib/interfaces/lock.interface.js';
import { settleCall } from './settle-call.js';
import type { World } from './world.js';

/** The probe's semaphore: nobody else calls it. */
const KEY = 'sl';
const LIMIT = 2;
/** The waiter's ttl; the lapsing holder's (its watchdog ticks every 200 ms). */
const LONG_TTL_MS = 3_000;
const SHORT_TTL_MS = 600;
/** The waiter's process stalls from this long before the lapse (its last refresh keeps its place past the window)... */
const STALL_BEFORE_MS = 60;
/** ...until this long after it: past the lapsing holder's release. */
const STALL_AFTER_MS = 140;
/** The lapsing holder's process runs again this long after its permit lapsed in the store. */
const RESUME_AFTER_MS = 30;

/**
 * The in-memory store (`nestjs-redis-lock/testing`) answers as Redis' scripts do: a semaphore
 * release that finds neither its permit nor its entry in the holders hash (its lease ran out and a
 * count dropped the entry, or the holders hash ended with the lease of its last holder) grants
 * nobody, as the release script's fast part answers `{0}` at once: the waiters queued for the
 * permits that entry counted take them at their next poll (47a5839).
 * Judged on every release of every schedule, as the store runs it (no draw, nothing changed).
 */
export function watchSemaphoreReleases(world: World): void {
  const semaphores = world.store.semaphores;
  const release = semaphores.release.bind(semaphores);
  semaphores.release = async (keys: SemaphoreKeys, token: string, waiterLease: number) => {
    // As the command reaches the store: nothing else runs in the store before it.
    const now = world.scheduler.now;
    const gone = liveValue(world.data.locks, keys.lock, now) !== token && liveValue(world.data.semaphoreHolders, keys.semaphore.holders, now)?.has(token) !== true;
    const reply = await release(keys, token, waiterLease);
    if (gone && reply.grants.length > 0) {
      world.violate(undefined, 'the in-memory store answers a semaphore release as Redis does: one whose permit and entry are both gone grants nobody', `${keys.semaphore.holders}: a release found neither permit nor entry of ${token} and granted ${reply.grants.map((grant) => grant.token).join(', ')}`);
    }
    return reply;
  };
}

/**
 * Steers the engine to the shape `watchSemaphoreReleases` judges, which the drawn faults did not
 * make (the revert of 47a5839 went unfound in 100 schedules): a release by a holder whose permit
 * and entry are both gone while a waiter is queued for its permits and no call has handed them on
 * since (every count hands freed permits to the queue since 0fcb240, so an entry a count dropped
 * leaves nothing to grant). On a semaphore of 2, the second live instance Y takes both permits
 * with a 600 ms lease, and a waiter of the first, X, queues for one. Y stalls (its event loop
 * held, a pause) until just past that lease's end in the store, where the holders hash ends with
 * it (its only holder's entry gone with it); X stalls around that end (its waiter's place kept,
 * its polls, which would take the permits, held back). Y runs again, is told of its loss and
 * gives its permits back: the store finds neither its permit nor its entry, and must grant X's
 * waiter nothing (it takes the permits by its poll once X runs again). After the faults; draws
 * nothing from the random streams.
 */
export async function lapsedEntryReleaseProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const [x, y] = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  if (x === undefined || y === undefined) return;
  const short = await settleCall(world, y.service.acquire(KEY, { limit: LIMIT, permits: LIMIT, ttl: SHORT_TTL_MS }), check, stop);
  if (short === undefined || world.violation) return;
  try {
    // The store's lease of Y's permits, read before its watchdog's first tick.
    const token = (short as unknown as { token: string }).token;
    const permit = [...world.data.locks.entries()].find(([name, entry]) => name.endsWith(`:permit:${token}`) && entry.value === token)?.[1];
    if (permit === undefined) return;
    const lapse = permit.expiresAt;
    const waiter: { lock?: Lock; failed?: true } = {};
    x.service.acquire(KEY, { limit: LIMIT, ttl: LONG_TTL_MS, waitTimeout: 60_000 }).then(
      (lock) => {
        waiter.lock = lock;
        world.trace(x, `lapsed-entry probe: the waiter holds ${KEY} #${lock.fencingToken}`);
        void lock.release().catch(() => undefined);
      },
      () => (waiter.failed = true),
    );
    await world.scheduler.run(world.scheduler.now + 20, check, stop);
    if (world.violation || waiter.lock !== undefined || waiter.failed === true || world.scheduler.now + STALL_BEFORE_MS >= lapse) return;
    world.pause(y, lapse + RESUME_AFTER_MS - world.scheduler.now, `lapsed-entry probe: stalls past its ${KEY} permits' lease (${lapse} ms)`);
    await world.scheduler.run(lapse - STALL_BEFORE_MS, check, stop);
    if (world.violation) return;
    world.pause(x, STALL_BEFORE_MS + STALL_AFTER_MS, `lapsed-entry probe: stalls around ${y.name}'s lapse`);
    await world.scheduler.run(lapse + STALL_AFTER_MS + 2 * WAITER_LEASE_MS, check, () => stop() || waiter.lock !== undefined || waiter.failed === true);
  } finally {
    void short.release().catch(() => undefined);
  }
}
