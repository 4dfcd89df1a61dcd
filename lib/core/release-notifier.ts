import type { Cluster, Redis } from 'ioredis';
import type { LockLogger } from './lock-logger.js';
import { clientKeyPrefix, type RedisClient } from './lock-scripts.js';

/** A waiter's registration with the notifier. */
export interface ReleaseWatch {
  /** Resolves when the subscription is active, so that no later release can be missed. */
  readonly ready: Promise<void>;
  /** The fencing token of a grant that arrived while nobody listened, consumed by this call. */
  takeGrant(): number | undefined;
  /**
   * Calls `listener` with the fencing token of the next grant; the returned function stops
   * listening, after which a grant is kept for `takeGrant()` instead.
   */
  onGrant(listener: (fencingToken: number) => void): () => void;
  /** Stops watching; the channel is unsubscribed when its last waiter leaves. */
  close(): void;
}

interface ChannelState {
  ready: Promise<void>;
  /** Waiters on this channel by token: each release wakes exactly the one it hands the lock to. */
  waiters: Map<string, (fencingToken: number) => void>;
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
  private subscriber?: Redis | Cluster;
  private readonly channels = new Map<string, ChannelState>();
  /** Channel names as Redis sees them: scripts publish on a key, which ioredis prefixes. */
  private readonly channelPrefix: string;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: LockLogger,
    /** Resolves whether releases use sharded pub/sub (must match what the scripts publish with). */
    private readonly sharded: () => Promise<boolean>,
  ) {
    this.channelPrefix = clientKeyPrefix(client);
  }

  watch(channel: string, token: string): ReleaseWatch {
    const name = this.channelPrefix + channel;
    let state = this.channels.get(name);
    if (state === undefined) {
      const ready = this.sharded().then(async (sharded) => {
        const subscriber = this.connection(sharded);
        await (sharded ? (subscriber as Cluster).ssubscribe(name) : subscriber.subscribe(name));
      });
      state = { ready, waiters: new Map() };
      // A failed subscription only costs the waiter its wake-ups; its timers still run.
      state.ready.catch((error: unknown) => this.logger.warn(`Subscribing to ${name} failed (${(error as Error).message}); waiters poll instead.`));
      this.channels.set(name, state);
    }
    const channelState = state;
    // A release may hand over the lock while the waiter's attempt is still in flight: keep it,
    // so the wait that follows ends at once instead of missing it.
    let granted: number | undefined;
    let listener: ((fencingToken: number) => void) | undefined;
    // Each grant arrives twice when the releasing holder is in this process (its reply and the
    // message), and fencing tokens of one key only grow: a token seen before is a copy.
    let newest = -Infinity;
    channelState.waiters.set(token, (fencingToken) => {
      if (!(fencingToken > newest)) return;
      newest = fencingToken;
      if (listener === undefined) {
        granted = fencingToken;
        return;
      }
      const deliver = listener;
      listener = undefined;
      deliver(fencingToken);
    });
    return {
      ready: channelState.ready.catch(() => undefined),
      takeGrant: () => {
        const fencingToken = granted;
        granted = undefined;
        return fencingToken;
      },
      onGrant: (next) => {
        listener = next;
        return () => {
          if (listener === next) listener = undefined;
        };
      },
      close: () => {
        channelState.waiters.delete(token);
        if (channelState.waiters.size === 0 && this.channels.get(name) === channelState) {
          this.channels.delete(name);
          // After the caller's code has started: a woken waiter runs before the bookkeeping.
          setImmediate(() => {
            if (this.channels.has(name) || this.subscriber === undefined) return;
            const subscriber = this.subscriber;
            (this.shardedMode ? (subscriber as Cluster).sunsubscribe(name) : subscriber.unsubscribe(name)).catch(() => undefined);
          });
        }
      },
    };
  }

  /** A release in this process handed the lock to `token`: wake it without waiting for the message. */
  wake(channel: string, token: string, fencingToken: number): void {
    this.channels.get(this.channelPrefix + channel)?.waiters.get(token)?.(fencingToken);
  }

  close(): void {
    this.channels.clear();
    this.subscriber?.disconnect();
  }

  private shardedMode = false;

  private connection(sharded: boolean): Redis | Cluster {
    if (this.subscriber === undefined) {
      this.shardedMode = sharded;
      // ioredis routes SSUBSCRIBE to the node that owns the channel's slot only in this mode.
      const subscriber = sharded ? (this.client as Cluster).duplicate(undefined, { shardedSubscribers: true }) : this.client.duplicate();
      const onMessage = (channel: string, message: string): void => {
        const separator = message.indexOf(':');
        const waiter = this.channels.get(channel)?.waiters.get(message.slice(0, separator));
        waiter?.(Number(message.slice(separator + 1)));
      };
      subscriber.on('message', onMessage);
      subscriber.on('smessage', onMessage);
      subscriber.on('error', () => undefined); // the command connection reports connection trouble
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}
