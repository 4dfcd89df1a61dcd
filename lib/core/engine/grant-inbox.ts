/**
 * Where the grants of one waiter arrive: a release that hands it the lock names it with the
 * fencing token of its turn. A grant may come while the waiter is not listening (its attempt
 * is in flight): it is kept for the next wait. The same grant may come twice (the releasing
 * holder's reply in this process, then the message): fencing tokens of one key only grow, so a
 * token not above the newest seen is a copy, and is dropped.
 */
/**
 * What a wait resolves to when a release freed the lock for barging waiters (`fairness:
 * 'barging'`) instead of handing it over: try again now. Never a fencing token (they are 1 or more).
 */
export const FREED = 0;

export class GrantInbox {
  /** `racesFreed`: whether this waiter races for a lock a release freed (see `freeOne`). */
  constructor(readonly racesFreed: boolean) {}

  private granted?: number;
  /** A release freed the lock while nobody listened: the next wait tries again at once. */
  private freed = false;
  private listener?: (fencingToken: number) => void;
  private newest = -Infinity;
  /** Whether every grant is only a wake-up (see `wakeOnEveryGrant`): none is dropped as a copy. */
  private wakesOnly = false;

  deliver(fencingToken: number): void {
    if (!(fencingToken > this.newest) && !this.wakesOnly) return;
    if (fencingToken > this.newest) this.newest = fencingToken;
    if (!this.hand(fencingToken)) this.granted = fencingToken;
  }

  /**
   * The waiter confirms every grant with an attempt from now on (its place in the queue was
   * lost): a grant is only a wake-up, and none is dropped as a copy of an older one, since the
   * fencing counter may have restarted (Redis lost its data), and a real grant of the new
   * counter may carry a token below one heard before the loss.
   */
  wakeOnEveryGrant(): void {
    this.wakesOnly = true;
  }

  /** Gives `value` to the listener, if one listens (once): false when nobody did. */
  private hand(value: number): boolean {
    const listener = this.listener;
    if (listener === undefined) return false;
    this.listener = undefined;
    listener(value);
    return true;
  }

  /**
   * An attempt found the lock busy while the key's fencing counter stood at `fence`: a grant up
   * to that token was made before the attempt and had expired by then (a stalled process reads
   * its message late). Drop it, and every later copy of it.
   */
  staleThrough(fence: number): void {
    if (fence > this.newest) this.newest = fence;
    if (this.granted !== undefined && this.granted <= fence) this.granted = undefined;
  }

  /** A release freed the lock: the waiter races for it (see `FREED`). */
  free(): void {
    if (!this.hand(FREED)) this.freed = true;
  }

  /** Whether a release freed the lock for this waiter and it has not tried since. */
  get holdsFree(): boolean {
    return this.freed;
  }

  /** The waiter passed its wake-up on (see `freeOne`): an unused one is not its own any more. */
  dropFree(): void {
    this.freed = false;
  }

  /** The grant kept while nobody listened (else `FREED` if a release freed the lock), consumed by this call. */
  take(): number | undefined {
    const fencingToken = this.granted;
    this.granted = undefined;
    if (fencingToken !== undefined) return fencingToken;
    if (!this.freed) return undefined;
    this.freed = false;
    return FREED;
  }

  /** Calls `listener` with the next grant; the returned function stops listening. */
  listen(listener: (fencingToken: number) => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }
}

/**
 * A release freed the lock (`FREED_MESSAGE`): wakes one waiter of this process on its channel,
 * the one that watched longest and was not woken yet, so that each message sends one racer per
 * process (as Redisson's `RLock` does) rather than every waiter at once. Only a waiter that races
 * for a freed lock (barging) is woken: the message is meant for those that said they wait.
 */
export function freeOne(waiters: ReadonlyMap<string, GrantInbox>, except?: GrantInbox): void {
  for (const inbox of waiters.values()) {
    if (!inbox.racesFreed || inbox.holdsFree || inbox === except) continue;
    inbox.free();
    return;
  }
}
