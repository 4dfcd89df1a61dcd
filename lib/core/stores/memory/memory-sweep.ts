import type { Entry } from './memory-data.js';

/** Keys a store call looks at, on top of those it reads: more than any call creates (see `ExpirySweep`). */
const SWEEP_STEP = 20;

type Keys = Map<string, Entry<unknown>>;

/**
 * Redis' active expiry for the in-memory store: a key nobody reads again must still go once its
 * time is out (a fencing counter past its retention, a crashed holder's lease, a lapsed waiter's
 * queue), or a process locking ever new keys (`order:<id>`) holds them all for its life. Each
 * store call looks at the next `SWEEP_STEP` keys, all maps in turn, and drops the expired ones,
 * as reading them would (`liveValue`): no timer to keep a process alive, a bounded cost per call.
 * A call creates fewer keys than it looks at, so a round of every key held takes fewer calls than
 * there are keys, and the expired keys left wait one round at most: a fraction of those held.
 */
export class ExpirySweep {
  private readonly walk: Iterator<[Keys, string, Entry<unknown>] | undefined, never>;

  constructor(maps: readonly Keys[]) {
    this.walk = walk(maps);
  }

  /** Looks at up to `SWEEP_STEP` keys from where the last call stopped, dropping those expired at `now`. */
  step(now: number): void {
    for (let looked = 0; looked < SWEEP_STEP; looked++) {
      const next = this.walk.next().value;
      // Round all the maps once: a store holding fewer keys is not walked twice in one call.
      if (next === undefined) return;
      const [map, key, entry] = next;
      if (entry.expiresAt < now && map.get(key) === entry) map.delete(key);
    }
  }
}

/** Every key of `maps`, round after round (a Map's iterator sees keys added and skips keys deleted meanwhile); `undefined` ends each round. */
function* walk(maps: readonly Keys[]): Generator<[Keys, string, Entry<unknown>] | undefined, never> {
  for (;;) {
    for (const map of maps) for (const [key, entry] of map) yield [map, key, entry];
    yield undefined;
  }
}
