import type { ReleaseWatcher } from '../../engine/lock-backend.js';
import { freeOne, GrantInbox } from '../../engine/grant-inbox.js';
import { FREED_MESSAGE } from '../lock-replies.js';
import type { ReleaseWatch } from '../redis/release-notifier.js';

/**
 * Release messages of the in-memory store, for one application: what a subscriber connection
 * is to Redis. Subscribing is immediate; a message names `<token>:<fencing token>`, or is `*` (freed for barging waiters).
 */
export class MemoryNotifier implements ReleaseWatcher {
  private readonly channels = new Map<string, Map<string, GrantInbox>>();

  watch(channel: string, token: string, racesFreed: boolean): ReleaseWatch {
    let waiters = this.channels.get(channel);
    if (waiters === undefined) this.channels.set(channel, (waiters = new Map()));
    const inbox = new GrantInbox(racesFreed);
    const channelWaiters = waiters;
    channelWaiters.set(token, inbox);
    return {
      ready: Promise.resolve(),
      takeGrant: () => inbox.take(),
      staleThrough: (fence) => inbox.staleThrough(fence),
      wakeOnEveryGrant: () => inbox.wakeOnEveryGrant(),
      onGrant: (listener) => inbox.listen(listener),
      passOn: () => {
        // Passed on: a wake-up this waiter holds unused is not passed on again at close().
        inbox.dropFree();
        freeOne(channelWaiters, inbox);
      },
      close: () => {
        channelWaiters.delete(token);
        // A waiter that leaves with a free lock unclaimed passes the wake-up on.
        if (inbox.holdsFree) freeOne(channelWaiters);
        if (channelWaiters.size === 0 && this.channels.get(channel) === channelWaiters) this.channels.delete(channel);
      },
    };
  }

  /** Always: a message is delivered in this process, to whoever watches when it is published. */
  subscribed(): boolean {
    return true;
  }

  wake(channel: string, token: string, fencingToken: number): void {
    this.channels.get(channel)?.get(token)?.deliver(fencingToken);
  }

  /** A message the store published. */
  receive(channel: string, message: string): void {
    if (message === FREED_MESSAGE) {
      const waiters = this.channels.get(channel);
      if (waiters !== undefined) freeOne(waiters);
      return;
    }
    const separator = message.indexOf(':');
    this.wake(channel, message.slice(0, separator), Number(message.slice(separator + 1)));
  }

  close(): void {
    this.channels.clear();
  }
}
