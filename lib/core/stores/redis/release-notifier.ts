import { GrantInbox } from '../../engine/grant-inbox.js';
import { driverFor } from './drivers/driver-for.js';
import type { ReleaseSubscriber } from './drivers/redis-driver.js';
import type { LockLogger } from '../../engine/lock-logger.js';
import type { RedisClient } from './drivers/redis-client.js';

/** A waiter's registration with the notifier. */
export interface ReleaseWatch {
  /** Resolves when the subscription is active, so that no later release can be missed. */
  readonly ready: Promise<void>;
  /** The fencing token of a grant that arrived while nobody listened, consumed by this call. */
  takeGrant(): number | undefined;
  /** An attempt answered busy with the fencing counter at `fence`: grants up to it are stale (see `GrantInbox.staleThrough`). */
  staleThrough(fence: number): void;
  /**
   * Calls `listener` with the fencing token of the next grant; the returned function stops
   * listening, after which a grant is kept for `takeGrant()` instead.
   */
  onGrant(listener: (fencingToken: number) => void): () => void;
  /** Stops watching; the channel is unsubscribed when its last waiter leaves. */
  close(): void;
}

interface ChannelState {
  /** Settles with the first SUBSCRIBE; a failed one is retried while waiters remain. */
  ready: Promise<void>;
  retry?: NodeJS.Timeout;
  /** Waiters on this channel by token: each release wakes exactly the one it hands the lock to. */
  waiters: Map<string, GrantInbox>;
}

/**
 * One subscriber connection per process, shared by every waiter: a waiter subscribes to its
 * lock's release channel before retrying. A release hands the lock to the waiter whose turn it
 * is and publishes `<token>:<fencing token>`, so it wakes that one waiter, already holding the
 * lock, instead of all of them. On a Redis 7 Cluster this is sharded pub/sub (SPUBLISH /
 * SSUBSCRIBE, carried by the shard that owns the lock); on older clusters a plain PUBLISH,
 * which the cluster bus takes to every node.
 */
export class ReleaseNotifier {
  private subscriber?: ReleaseSubscriber;
  private readonly channels = new Map<string, ChannelState>();
  /** Channel names as Redis sees them: scripts publish on a declared key, which the client prefixes. */
  private readonly channelPrefix: string;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: LockLogger,
    /** Resolves whether releases use sharded pub/sub (must match what the scripts publish with). */
    private readonly sharded: () => Promise<boolean>,
  ) {
    this.channelPrefix = driverFor(client).keyPrefix;
  }

  watch(channel: string, token: string): ReleaseWatch {
    const name = this.channelPrefix + channel;
    let state = this.channels.get(name);
    if (state === undefined) {
      state = { ready: Promise.resolve(), waiters: new Map() };
      this.channels.set(name, state);
      state.ready = this.subscribe(name, state, 0);
    }
    const channelState = state;
    const inbox = new GrantInbox();
    channelState.waiters.set(token, inbox);
    return {
      ready: channelState.ready.catch(() => undefined),
      takeGrant: () => inbox.take(),
      staleThrough: (fence) => inbox.staleThrough(fence),
      onGrant: (listener) => inbox.listen(listener),
      close: () => {
        channelState.waiters.delete(token);
        if (channelState.waiters.size === 0 && this.channels.get(name) === channelState) {
          this.channels.delete(name);
          clearTimeout(channelState.retry);
          // After the caller's code has started: a woken waiter runs before the bookkeeping.
          setImmediate(() => {
            if (this.channels.has(name) || this.subscriber === undefined) return;
            this.subscriber.unsubscribe(name).catch(() => undefined);
          });
        }
      },
    };
  }

  /** A release in this process handed the lock to `token`: wake it without waiting for the message. */
  wake(channel: string, token: string, fencingToken: number): void {
    this.channels.get(this.channelPrefix + channel)?.waiters.get(token)?.deliver(fencingToken);
  }

  close(): void {
    for (const state of this.channels.values()) clearTimeout(state.retry);
    this.channels.clear();
    this.subscriber?.close();
  }

  /**
   * Subscribes to `name` (as Redis spells it). A failed SUBSCRIBE costs the waiters their
   * wake-ups until it succeeds: they poll meanwhile, and it is retried (after 0.25 s, doubling
   * up to 4 s) for as long as the channel has waiters, instead of being kept failed.
   */
  private subscribe(name: string, state: ChannelState, failures: number): Promise<void> {
    return this.sharded()
      .then(async (sharded) => {
        await this.connection(sharded).subscribe(name);
      })
      .catch((error: unknown) => {
        if (this.channels.get(name) !== state) throw error;
        if (failures === 0) this.logger.warn(`Subscribing to ${name} failed (${(error as Error).message}); waiters poll until a retry succeeds.`);
        state.retry = setTimeout(() => {
          state.retry = undefined;
          if (this.channels.get(name) === state) this.subscribe(name, state, failures + 1).catch(() => undefined);
        }, Math.min(4_000, 250 * 2 ** failures));
        throw error;
      });
  }

  /**
   * The subscriber connection, opened by the client's driver on first use. Whether it is
   * sharded is fixed then: the answer of `sharded()` never changes once known.
   */
  private connection(sharded: boolean): ReleaseSubscriber {
    this.subscriber ??= driverFor(this.client).subscriber(sharded, (channel, message) => {
      const separator = message.indexOf(':');
      const waiter = this.channels.get(channel)?.waiters.get(message.slice(0, separator));
      waiter?.deliver(Number(message.slice(separator + 1)));
    });
    return this.subscriber;
  }
}
