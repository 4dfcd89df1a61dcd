/**
 * Where the grants of one waiter arrive: a release that hands it the lock names it with the
 * fencing token of its turn. A grant may come while the waiter is not listening (its attempt
 * is in flight): it is kept for the next wait. The same grant may come twice (the releasing
 * holder's reply in this process, then the message): fencing tokens of one key only grow, so a
 * token not above the newest seen is a copy, and is dropped.
 */
export class GrantInbox {
  private granted?: number;
  private listener?: (fencingToken: number) => void;
  private newest = -Infinity;

  deliver(fencingToken: number): void {
    if (!(fencingToken > this.newest)) return;
    this.newest = fencingToken;
    const listener = this.listener;
    if (listener === undefined) {
      this.granted = fencingToken;
      return;
    }
    this.listener = undefined;
    listener(fencingToken);
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

  /** The grant kept while nobody listened, consumed by this call. */
  take(): number | undefined {
    const fencingToken = this.granted;
    this.granted = undefined;
    return fencingToken;
  }

  /** Calls `listener` with the next grant; the returned function stops listening. */
  listen(listener: (fencingToken: number) => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }
}
