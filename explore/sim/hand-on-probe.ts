import type { SemaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { liveValue } from '../../lib/core/stores/memory/memory-data.js';
import type { Lock } from '../../lib/interfaces/lock.interface.js';
import { settleCall, SETTLE_MS } from './settle-call.js';
import type { World } from './world.js';

/** The probe's semaphore: nobody else calls it. */
const KEY = 'so';
const LIMIT = 2;
/** The limit the probe's other caller asks, which the store refuses. */
const OTHER_LIMIT = 3;
/** The lapsing holder's ttl (its watchdog would tick at 200 ms); the other holder's and the waiter's. */
const SHORT_TTL_MS = 600;
const LONG_TTL_MS = 3_000;
/** The waiter's process runs again this long after the lapse: past the other-limit call. */
const STALL_AFTER_MS = 100;

/** What the store did with the probe's other-limit call. */
interface Judged {
  /** Holders whose permit was gone as the call ran (its count drops their entries), the waiters queued then. */
  lapsed: string[];
  queued: string[];
  /** Holders the call added (grants to the queue). */
  granted: string[];
  free: number;
}

/** The probe running in each world, told what the store did with its other-limit call (see `watchOtherLimitCalls`). */
const judges = new WeakMap<World, (judged: Judged) => void>();

/**
 * Reads the store around each semaphore acquire of the probe's key asking `OTHER_LIMIT` while
 * `handOnProbe` runs: the holders whose permit was gone as it ran, the waiters queued, the holders
 * it added. Installed as the world is made, before the instances' network wraps the store.
 */
export function watchOtherLimitCalls(world: World): void {
  const semaphores = world.store.semaphores;
  const acquire = semaphores.acquire.bind(semaphores);
  semaphores.acquire = async (...args: Parameters<typeof acquire>) => {
    const keys: SemaphoreKeys = args[0];
    const judge = judges.get(world);
    if (judge === undefined || keys.semaphore.limit !== OTHER_LIMIT || !keys.semaphore.holders.includes(`{${KEY}}`)) return acquire(...args);
    // As the command reaches the store: nothing else runs in the store before it.
    const now = world.scheduler.now;
    const before = liveValue(world.data.semaphoreHolders, keys.semaphore.holders, now) ?? new Map<string, string>();
    const permitOf = (holder: string): string => `${keys.semaphore.holders.slice(0, -':holders'.length)}:permit:${holder}`;
    const lapsed = [...before.keys()].filter((holder) => (world.data.locks.get(permitOf(holder))?.expiresAt ?? -Infinity) < now);
    const queued = [...(liveValue(world.data.waiting, keys.queue, now)?.order ?? [])];
    const tokens = new Set(before.keys());
    const reply = await acquire(...args);
    const after = liveValue(world.data.semaphoreHolders, keys.semaphore.holders, world.scheduler.now) ?? new Map<string, string>();
    let used = 0;
    for (const value of after.values()) used += Number(value.split(':')[0]);
    judge({ lapsed, queued, granted: [...after.keys()].filter((holder) => !tokens.has(holder)), free: LIMIT - used });
    return reply;
  };
}

/**
 * A semaphore call that takes no permits itself (here a caller refused for asking another limit;
 * a granted waiter's acquire confirming its grant is the other) counts the holders first, which
 * drops the entries of holders whose permit ran out (they crashed, or stalled past their lease):
 * the permits so freed go to the waiters queued for them, as a release's do (0fcb240: it answered
 * at once and handed them to nobody, and the waiters slept until their next poll). The drawn
 * faults never made the shape: the lapsed holder's entry must still be in the holders hash (a
 * live holder keeps the hash), the waiters' own polls held back (each would take the permits
 * itself), and a call of another limit come in. On a semaphore of 2, the first live instance X
 * holds 1 permit with a 600 ms lease and queues a waiter for 1 more; the second, Y, holds the
 * other with a long one. X stalls (its event loop held) until past its lease's end in the store,
 * and just past that end Y asks the semaphore with limit 3: the store, its count dropping X's
 * entry, must hand the permit to X's waiter. Judged as the store runs that call. After the
 * faults; draws nothing from the random streams.
 */
export async function handOnProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const [x, y] = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  if (x === undefined || y === undefined) return;
  const held: Lock[] = [];
  let judged: Judged | undefined;
  try {
    const short = await settleCall(world, x.service.acquire(KEY, { limit: LIMIT, ttl: SHORT_TTL_MS }), check, stop);
    if (short === undefined || world.violation) return;
    held.push(short);
    const long = await settleCall(world, y.service.acquire(KEY, { limit: LIMIT, ttl: LONG_TTL_MS }), check, stop);
    if (long === undefined || world.violation) return;
    held.push(long);
    const token = (short as unknown as { token: string }).token;
    const permit = [...world.data.locks.entries()].find(([name, entry]) => name.endsWith(`:permit:${token}`) && entry.value === token)?.[1];
    if (permit === undefined) return;
    const lapse = permit.expiresAt;
    const waiter: { lock?: Lock; failed?: true } = {};
    x.service.acquire(KEY, { limit: LIMIT, ttl: LONG_TTL_MS, waitTimeout: 60_000 }).then(
      (lock) => {
        waiter.lock = lock;
        world.trace(x, `hand-on probe: the waiter holds ${KEY} #${lock.fencingToken}`);
        void lock.release().catch(() => undefined);
      },
      () => (waiter.failed = true),
    );
    await world.scheduler.run(world.scheduler.now + 20, check, stop);
    // The shape did not form: the waiter got in, or the lease is too near to stall before it.
    if (world.violation || waiter.lock !== undefined || waiter.failed === true || x.paused || world.scheduler.now + SETTLE_MS >= lapse) return;
    world.pause(x, lapse + STALL_AFTER_MS - world.scheduler.now, `hand-on probe: stalls past its ${KEY} permit's lease (${lapse} ms)`);
    judges.set(world, (found) => (judged = found));
    await world.scheduler.run(lapse + 1, check, stop);
    if (world.violation || !y.alive || y.paused) return;
    const other: { settled?: true } = {};
    y.service.acquire(KEY, { limit: OTHER_LIMIT, waitTimeout: 0 }).then(
      (lock) => void lock.release().catch(() => undefined),
      () => undefined,
    ).finally(() => (other.settled = true));
    await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || other.settled === true);
    if (world.violation || judged === undefined) return;
    world.trace(y, `hand-on probe: the store ran the limit-${OTHER_LIMIT} call with ${JSON.stringify(judged)}`);
    // The shape formed: the call's count dropped a lapsed holder while a waiter was queued.
    if (judged.lapsed.length > 0 && judged.queued.length > 0 && judged.granted.length === 0 && judged.free > 0) {
      world.violate(y, 'a semaphore call that takes no permits itself (another limit asked) hands the permits its count freed to the waiters queued for them',
        `${KEY}: a call of limit ${OTHER_LIMIT} dropped the entries of ${judged.lapsed.join(', ')} (their permits gone) and left ${judged.free} permit(s) free with ${judged.queued.join(', ')} queued, granting nobody`);
    }
    await world.scheduler.run(lapse + STALL_AFTER_MS + SETTLE_MS, check, () => stop() || waiter.lock !== undefined || waiter.failed === true);
  } finally {
    judges.delete(world);
    for (const lock of held) void lock.release().catch(() => undefined);
  }
}
