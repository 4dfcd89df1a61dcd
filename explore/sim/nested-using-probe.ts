import type { Lock } from '../../lib/interfaces/lock.interface.js';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { liveValue } from '../../lib/core/stores/memory/memory-data.js';
import { SETTLE_MS } from './settle-call.js';
import { KEY_PREFIX, type World } from './world.js';

/** The probe's key: nobody else calls it. */
const KEY = 'nu';

/** What the nested call's fn saw as it ran. */
interface Ran {
  held: boolean;
  current: boolean;
  token?: number;
  /** The store's owner token of the key then. */
  owner?: string;
  /** The owner token the handle's chain names (its own, or its outer lock's). */
  own?: string;
}

/**
 * docs/locks.md ("Reentrancy"): a nested `using()` of a key its call chain holds runs under the
 * outer lock, and nested work that outlives the outer lock takes the key afresh. One started from
 * a microtask of the outer call's last step (a `then` of a promise the outer code made, not
 * awaited) gets its re-entry while the outer lock is held, and its fn runs once the outer call
 * released it: fn must still run under the key held (d198f20: it ran with no lock at all, its
 * handle `held: false`, `current()` naming nothing, the store giving the key to nobody). No
 * workload nests so (the sections' re-entries are awaited inside the outer fn). After the faults,
 * on the first live instance; draws nothing from the random streams.
 */
export async function nestedUsingProbe(world: World, check: () => void, stop: () => boolean): Promise<void> {
  const instance = world.instances.find((i) => i.alive && !i.stopping && !i.paused);
  if (instance === undefined) return;
  const service = instance.service;
  const lockKey = lockRedisKeys(KEY_PREFIX, KEY).lock;
  let nested: Promise<Ran> | undefined;
  let outerToken: number | undefined;
  const outer: { settled?: true; failed?: unknown } = {};
  service
    .using(KEY, (lock) => {
      outerToken = lock.fencingToken;
      // Not awaited: the nested call starts from a microtask of the outer fn's last step.
      void Promise.resolve().then(() => {
        nested = service.using(KEY, (inner: Lock) => {
          const own = ownerToken(inner);
          return { held: inner.held, current: service.current(KEY) !== undefined, token: inner.fencingToken, owner: liveValue(world.data.locks, lockKey, world.scheduler.now), own };
        });
        nested.catch(() => undefined);
      });
    })
    .then(
      () => (outer.settled = true),
      (error: unknown) => {
        outer.failed = error;
        outer.settled = true;
      },
    );
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || outer.settled === true);
  if (world.violation || outer.settled !== true || outer.failed !== undefined || nested === undefined) return;
  const result: { ran?: Ran; error?: unknown } = {};
  nested.then(
    (ran) => (result.ran = ran),
    (error: unknown) => (result.error = error),
  );
  await world.scheduler.run(world.scheduler.now + SETTLE_MS, check, () => stop() || result.ran !== undefined || result.error !== undefined);
  // Its fn never ran (the take afresh failed, or is still on its way after a fault): nothing to judge.
  if (world.violation || !instance.alive || instance.paused || result.ran === undefined) return;
  const ran = result.ran;
  world.trace(instance, `nested-using probe: the nested using(${KEY}) begun as the outer #${outerToken}'s fn ended ran with ${JSON.stringify(ran)}`);
  if (!ran.held || !ran.current || ran.own === undefined || ran.owner !== ran.own) {
    world.violate(instance, 'a nested using() runs fn under the key held (taken afresh once the outer call released it)',
      `${KEY}: the nested call started from a microtask of the outer #${outerToken}'s last step ran fn with its handle ${ran.held ? 'held' : 'not held'}, current() ${ran.current ? 'naming a lock' : 'naming nothing'}, the store's owner ${ran.owner ?? 'nobody'}${ran.own === undefined ? '' : ` (the handle's token ${ran.own})`}`);
  }
}

/** The store token a handle holds under: its own (a lock taken), or its outer lock's (a re-entry). */
function ownerToken(lock: Lock): string | undefined {
  let current: unknown = lock;
  for (let depth = 0; depth < 4 && current !== undefined; depth++) {
    const token = (current as { token?: unknown }).token;
    if (typeof token === 'string') return token;
    current = (current as { outer?: unknown }).outer;
  }
  return undefined;
}
