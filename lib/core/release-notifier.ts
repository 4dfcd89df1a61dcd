import type { Cluster, Redis } from 'ioredis';
import { GrantInbox } from './grant-inbox.js';
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
      onGrant: (listener) => inbox.listen(listener),
      close: () => {
        channelState.waiters.delete(token);
        if (channelState.waiters.size === 0 && this.channels.get(name) === channelState) {
          this.channels.delete(name);
          clearTimeout(channelState.retry);
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
    this.channels.get(this.channelPrefix + channel)?.waiters.get(token)?.deliver(fencingToken);
  }

  close(): void {
    for (const state of this.channels.values()) clearTimeout(state.retry);
    this.channels.clear();
    this.subscriber?.disconnect();
  }

  /**
   * Subscribes to `name` (as Redis spells it). A failed SUBSCRIBE costs the waiters their
   * wake-ups until it succeeds: they poll meanwhile, and it is retried (after 0.25 s, doubling
   * up to 4 s) for as long as the channel has waiters, instead of being kept failed.
   */
  private subscribe(name: string, state: ChannelState, failures: number): Promise<void> {
    return this.sharded()
      .then(async (sharded) => {
        const subscriber = this.connection(sharded);
        await (this.shardedMode ? (subscriber as Cluster).ssubscribe(name) : subscriber.subscribe(name));
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

  private shardedMode = false;

  /**
   * The subscriber connection, a `duplicate()` of the client without its `keyPrefix`: channel
   * names here are already spelled as Redis sees them (the scripts publish on a declared key,
   * which ioredis prefixed), and ioredis would prefix a SSUBSCRIBE channel a second time.
   */
  private connection(sharded: boolean): Redis | Cluster {
    if (this.subscriber === undefined) {
      this.shardedMode = sharded;
      // ioredis routes SSUBSCRIBE to the node that owns the channel's slot only with `shardedSubscribers`.
      const subscriber = (this.client as { isCluster?: boolean }).isCluster
        ? (this.client as Cluster).duplicate(undefined, { keyPrefix: '', redisOptions: { ...(this.client as Cluster).options.redisOptions, keyPrefix: '' }, shardedSubscribers: sharded })
        : (this.client as Redis).duplicate({ keyPrefix: '' });
      const onMessage = (channel: string, message: string): void => {
        const separator = message.indexOf(':');
        const waiter = this.channels.get(channel)?.waiters.get(message.slice(0, separator));
        waiter?.deliver(Number(message.slice(separator + 1)));
      };
      subscriber.on('message', onMessage);
      subscriber.on('smessage', onMessage);
      subscriber.on('error', () => undefined); // the command connection reports connection trouble
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}
