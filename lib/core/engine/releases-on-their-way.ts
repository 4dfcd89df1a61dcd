/**
 * The holders' releases this process sent and Redis has not answered yet, by release channel,
 * kept while anyone listens to lock events. A release that hands the lock to a waiter of this
 * process tells it twice: its message, on the subscriber connection, and its reply, on the
 * command connection, read in either order. A waiter woken by the message first would tell its
 * `acquired` before the holder's reply told `released`: `events$`, the diagnostics channels and
 * the lock board would show two holders of one lock. Such a waiter waits for the reply first
 * (see `Acquisition.takeGrant`), which Redis sent with the message: no wait to speak of.
 */
export class ReleasesOnTheirWay {
  private readonly sent = new Map<string, Promise<unknown>>();

  /**
   * Keeps `reply`, the end of a release on `channel` (answered, or given up at the lease's end),
   * until it settles. It settles once the holder told its release: a waiter awaiting it runs
   * after. A release Redis never answers is given up, and its entry goes then: kept for its raw
   * reply, it held up every later grant of the key for as long as the application ran.
   */
  track(channel: string, reply: Promise<unknown>): void {
    const settled = reply.then(noop, noop);
    this.sent.set(channel, settled);
    void settled.then(() => {
      if (this.sent.get(channel) === settled) this.sent.delete(channel);
    });
  }

  /** The latest release on `channel` still on its way, if any. */
  onItsWay(channel: string): Promise<unknown> | undefined {
    return this.sent.get(channel);
  }
}

const noop = (): void => undefined;
