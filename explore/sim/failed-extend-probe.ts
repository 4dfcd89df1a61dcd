import type { HeldLock } from '../../lib/core/engine/held-lock.js';
import type { CommandFate } from './network.js';
import { SETTLE_MS, settleCall } from './settle-call.js';
import type { Instance, World } from './world.js';

/** The probe's key: nobody else calls it. */
const KEY = 'fe';
/** The lock's ttl: its watchdog renews every 200 ms. */
const TTL_MS = 600;
/** Ran in the store, its reply lost (a connection reset): the call rejects, the lock is still held. */
const REPLY_LOST: CommandFate = { lost: 'after', delay: 0 };

/**
 * docs/locks.md: an `extend()` that rejects leaves the lock on the ttl it had. The extend
 * workload's calls never rejected with their lock still held (a lost reply there came with the
 * watchdog's renewals lost too), so nothing judged what a failed extension left. Here a lock of
 * the first live instance, with its watchdog, is extended to twice its ttl, the renewal run in the
 * store and its reply lost; then, overlapping, to twice and to one and a half times it, both so.
 * Redis holds the failed lease for now (it ran the call); the first renewal sent after the last
 * failure must renew the lock to its own ttl: once it is applied, the store's lease runs no longer
 * than that (`lease-past-ttl` of the real-Redis explorer: 2edb03d, then 05c597b for the two
 * overlapping calls). After the faults, before the inner-wait and data-loss probes; draws nothing
 * from the random streams.
 */
export async function failedExtendProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const instance = world.instances.find((i) => i.alive && !i.stopping && !i.paused);
  if (instance === undefined) return;
  const lock = (await settleCall(world, instance.service.acquire(KEY, { ttl: TTL_MS }), check, stop)) as HeldLock | undefined;
  if (lock === undefined) return;
  try {
    for (const ttls of [[2 * TTL_MS], [2 * TTL_MS, (3 * TTL_MS) / 2]]) {
      if (!(await failedExtends(world, instance, lock, ttls, check, stop)) || world.violation) return;
    }
  } finally {
    void lock.release().catch(() => undefined);
  }
}

/** `extend()` calls of `lock` to `ttls` at once, each reply lost, then the judgement; false when the shape did not form. */
async function failedExtends(world: World, instance: Instance, lock: HeldLock, ttls: number[], check: () => void, stop: () => boolean): Promise<boolean> {
  for (const _ of ttls) world.steerNext(instance, 'renew', lock.lockKey, REPLY_LOST);
  world.trace(instance, `failed-extend probe: extends ${KEY} #${lock.fencingToken} to ${ttls.join(' and ')} ms, each reply lost`);
  let rejected = 0;
  const calls = ttls.map((ttl) => lock.extend(ttl).then(
    () => world.trace(instance, `failed-extend probe: the extend to ${ttl} ms resolved`),
    () => void rejected++,
  ));
  await settleCall(world, Promise.all(calls), check, stop);
  if (world.violation || rejected !== ttls.length || !lock.held || !instance.alive || instance.paused) return false;
  const internals = lock as unknown as { renewalsSent: number; renewalApplied: number };
  const sent = internals.renewalsSent;
  await world.scheduler.run(world.scheduler.now + TTL_MS / 3 + SETTLE_MS, check, () => stop() || internals.renewalApplied > sent);
  if (world.violation || internals.renewalApplied <= sent || !lock.held) return false;
  const entry = world.data.locks.get(lock.lockKey);
  const left = entry === undefined || entry.value !== lock.token ? 0 : entry.expiresAt - world.scheduler.now;
  if (left > TTL_MS) {
    world.violate(instance, 'a lock whose extend() calls rejected is renewed to the ttl it had', `${KEY} #${lock.fencingToken}: its extend() to ${ttls.join(' and ')} ms rejected; the first renewal sent after left the store's lease ${left} ms, past its ${TTL_MS} ms ttl`);
  }
  return true;
}
