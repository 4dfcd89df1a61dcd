import { LAST_ATTEMPT_GRACE_MS } from '../../lib/core/engine/waiter-timing.js';
import type { Lock } from '../../lib/index.js';
import type { Instance, World } from './world.js';

/** The keys of the probe's multi-key call (nobody else calls them); the rival holds the second. */
const KEYS = ['mk-a', 'mk-b'];
/** The call's lease: far over the give-back's bound, so that a give-back waited for to its end shows. */
const TTL_MS = 5_000;
const WAIT_MS = 300;
/** When the caller's connection freezes: its first key taken, its wait for the second under way. */
const FREEZE_AT_MS = 150;
/** Network hops on top of the bound (a few ms each). */
const SLACK_MS = 200;

/**
 * A multi-key call that fails after taking its first key, on a connection that stopped answering
 * (the shape 7f51ac1 fixed, `test/multi-key/failed-call-waits-for-give-back-until-leases-end-on-frozen-redis.spec.ts`):
 * instance B holds `mk-b`; A's `using(['mk-a', 'mk-b'])` (a 5 s lease, a 300 ms `waitTimeout`)
 * takes `mk-a` and waits; A's connection then freezes (commands run, no reply ever comes). Its
 * wait ends (the last attempt's 1 s grace at most past its `waitTimeout`) and it gives `mk-a`
 * back, a release never answered. docs/lock-family.md: "The call waits for that give-back one
 * second at most": the call rejects within `waitTimeout` plus two graces of the call's start,
 * not once `mk-a`'s lease ends. Draws nothing from the random streams.
 */
export async function multiKeyGiveBackProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const live = world.instances.filter((i) => i.alive && !i.stopping && !i.paused);
  if (live.length < 2) return;
  const [a, b] = live as [Instance, Instance];
  let rival: Lock | undefined;
  b.service.acquire(KEYS[1]!, { waitTimeout: WAIT_MS }).then(
    (lock) => (rival = lock),
    () => undefined,
  );
  await world.scheduler.run(world.scheduler.now + 50, check, () => stop() || rival !== undefined);
  if (world.violation || rival === undefined) return;
  const startedAt = world.scheduler.now;
  let settledAt: number | undefined;
  world.trace(a, `multi-key give-back probe: using(${KEYS.join(', ')}) while ${b.name} holds ${KEYS[1]}`);
  void a.service
    .using(KEYS, () => undefined, { ttl: TTL_MS, waitTimeout: WAIT_MS })
    .catch((error: unknown) => world.trace(a, `multi-key give-back probe: ${(error as Error).message}`))
    .finally(() => (settledAt = world.scheduler.now));
  await world.scheduler.run(startedAt + FREEZE_AT_MS, check, stop);
  if (world.violation || settledAt !== undefined || !a.alive || a.paused) return;
  world.freezeConnection(a, startedAt + TTL_MS + 2 * LAST_ATTEMPT_GRACE_MS);
  const bound = startedAt + WAIT_MS + 2 * LAST_ATTEMPT_GRACE_MS + SLACK_MS;
  await world.scheduler.run(bound, check, () => stop() || settledAt !== undefined);
  if (world.violation) return;
  if (settledAt === undefined && a.alive && !a.paused) {
    world.violate(a, 'a multi-key call that fails waits for the give-back of the keys it took one second at most', `using(${KEYS.join(', ')}) called at ${startedAt} ms, its connection frozen at ${startedAt + FREEZE_AT_MS} ms, still unsettled at ${bound} ms`);
    return;
  }
  // What the frozen connection left pending ends with its lease; then the world goes on as it was.
  await settleRival(world, rival, check, stop);
  await world.scheduler.run(startedAt + TTL_MS + 3 * LAST_ATTEMPT_GRACE_MS, check, stop);
}

async function settleRival(world: World, rival: Lock, check: () => void, stop: () => boolean): Promise<void> {
  let done = false;
  void rival.release().catch(() => undefined).finally(() => (done = true));
  await world.scheduler.run(world.scheduler.now + 50, check, () => stop() || done);
}
