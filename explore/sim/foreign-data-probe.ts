import { LockNotAcquiredError } from '../../lib/errors/lock-not-acquired.error.js';
import { RedisLockError } from '../../lib/errors/redis-lock.error.js';
import type { World } from './world.js';

/** The probe's key: nobody else calls it. */
const KEY = 'fd';
/** The call's waitTimeout: long, so that a call retried to it shows. */
const WAIT_MS = 5_000;

/**
 * A key of the lock holding data this library did not write (the shape d4b9e3d fixed,
 * `test/api/acquire-on-key-holding-foreign-data-waits-out-its-timeout.spec.ts`): the store refuses every acquire script on `fd` as Redis
 * refuses one that meets a hash where the lock's string goes (WRONGTYPE). docs/guarantees.md: such
 * a refusal ends the call at once with a `RedisLockError`; asking again changes nothing. Judged:
 * the store is asked once, and the call rejects with a `RedisLockError` (not the wait-timeout
 * `LockNotAcquiredError` of a call retried until its `waitTimeout`). Runs after the faults (no
 * reply of the probe is lost: one refusal is one attempt); draws nothing from the random streams.
 */
export async function foreignDataProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const instance = world.instances.find((i) => i.alive && !i.stopping && !i.paused);
  if (instance === undefined) return;
  world.foreignKeys.set(KEY, 0);
  let outcome: unknown;
  let ran = false;
  let settled = false;
  world.trace(instance, `foreign-data probe: ${KEY} holds data of another kind`);
  instance.service
    .using(KEY, () => void (ran = true), { waitTimeout: WAIT_MS })
    .then(
      () => (outcome = 'acquired'),
      (error: unknown) => (outcome = error),
    )
    .finally(() => (settled = true));
  await world.scheduler.run(world.scheduler.now + WAIT_MS + 2_000, check, () => stop() || settled);
  const refused = world.foreignKeys.get(KEY) ?? 0;
  world.foreignKeys.delete(KEY);
  if (world.violation || !instance.alive || instance.paused) return;
  const ended = outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : String(outcome);
  if (ran || !(outcome instanceof RedisLockError) || outcome instanceof LockNotAcquiredError || refused !== 1) {
    world.violate(instance, 'a call refused because its key holds data of another kind ends at that refusal, with a RedisLockError', `${KEY}: the store refused ${refused} attempt(s); the call ${settled ? `ended: ${ended}` : 'had not settled'}`);
  }
}
