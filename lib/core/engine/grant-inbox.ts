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
