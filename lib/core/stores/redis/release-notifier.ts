import { freeOne, GrantInbox } from '../../engine/grant-inbox.js';
import { FREED_MESSAGE } from '../lock-replies.js';
import { quoteKey } from '../../keys/quote-key.js';
import { driverFor } from './drivers/driver-for.js';
import type { ReleaseSubscriber } from './drivers/redis-driver.js';
import type { LockLogger } from '../../engine/lock-logger.js';
import type { RedisClient } from './drivers/redis-client.js';
import { setImmediate } from '../../time/real-timers.js';
import { WAITER_REFRESH_MS } from '../../engine/waiter-timing.js';
import { refusedReply } from '../../engine/store-failure.js';

/** A waiter's registration with the notifier. */
export interface ReleaseWatch {
  /** Resolves when the subscription is active, so that no later release can be missed. */
  readonly ready: Promise<void>;
  /** The fencing token of a grant that arrived while nobody listened, consumed by this call. */
  takeGrant(): number | undefined;
  /** An attempt answered busy with the fencing counter at `fence`: grants up to it are stale (see `GrantInbox.staleThrough`). */
  staleThrough(fence: number): void;
  /** Every grant only wakes the waiter from now on (see `GrantInbox.wakeOnEveryGrant`). */
  wakeOnEveryGrant(): void;
  /**
   * Calls `listener` with the fencing token of the next grant; the returned function stops
   * listening, after which a grant is kept for `takeGrant()` instead.
   */
  onGrant(listener: (fencingToken: number) => void): () => void;
  /**
   * Wakes the next waiter of this process on the channel as if the lock were freed: a barging
   * waiter that got the lock lets the next one ask again, and so say that it waits (a release
   * publishes only to waiters that said so since the last message).
   */
  passOn(): void;
  /** Stops watching; the channel is unsubscribed a moment after its last waiter left (see `LINGER_MS`). */
  close(): void;
}

interface ChannelState {
  /** Settles with the first SUBSCRIBE; a failed one is retried while waiters remain. */
  ready: Promise<void>;
  retry?: NodeJS.Timeout;
  /** Waiters on this channel by token: each release wakes exactly the one it hands the lock to. */
  waiters: Map<string, GrantInbox>;
  /** How the channel was subscribed to (Cluster: sharded unless its server refused SSUBSCRIBE). */
  sharded: boolean;
  /** Whether Redis confirmed the subscription: a release published from then on reaches this process. */
  live: boolean;
  /** Set while the channel lingers with no waiter (see `LINGER_MS`): it is unsubscribed when it fires. */
  linger?: NodeJS.Timeout;
}

/**
 * How long a channel stays subscribed after its last waiter left, so that the next waiter of
 * this process on a busy key finds it live and needs no second attempt (see `subscribed`).
 */
const LINGER_MS = 1_000;
/** At most this many channels linger at once: past it, the one that lingered longest goes. */
const MAX_LINGERING = 64;

/**
 * One subscriber connection per process, shared by every waiter: a waiter subscribes to its
 * lock's release channel before retrying. A release hands the lock to the waiter whose turn it
 * is and publishes `<token>:<fencing token>`, so it wakes that one waiter, already holding the
 * lock, instead of all of them. On a Cluster each master decides inside the script: SPUBLISH
 * (sharded, carried by the shard that owns the lock) on Redis 7, a plain PUBLISH (which the
 * cluster bus takes to every node) on an older server. The waiter matches it per channel:
 * SSUBSCRIBE, which goes to the master that owns the channel's slot, and SUBSCRIBE when that
 * master does not know the command. Nothing waits to hear every master's version, so a master
 * that does not answer holds up only the waiters of its own locks.
 */
export class ReleaseNotifier {
  private subscriber?: ReleaseSubscriber;
  private readonly channels = new Map<string, ChannelState>();
  /** Channels with no waiter left, subscribed a little longer, oldest first. */
  private readonly lingering = new Set<string>();
  /** Channel names as Redis sees them: scripts publish on a declared key, which the client prefixes. */
  private readonly channelPrefix: string;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: LockLogger,
    /** A Redis Cluster: subscribe sharded where the server has it, as the scripts publish. */
    private readonly cluster: boolean,
  ) {
    this.channelPrefix = driverFor(client).keyPrefix;
  }

  watch(channel: string, token: string, racesFreed: boolean): ReleaseWatch {
    const name = this.channelPrefix + channel;
    let state = this.channels.get(name);
    if (state === undefined) {
      state = { ready: Promise.resolve(), waiters: new Map(), sharded: this.cluster, live: false };
      this.channels.set(name, state);
      state.ready = this.subscribe(name, state, 0);
    } else if (state.linger !== undefined) {
      clearTimeout(state.linger);
      state.linger = undefined;
      this.lingering.delete(name);
    }
    const channelState = state;
    const inbox = new GrantInbox(racesFreed);
    channelState.waiters.set(token, inbox);
    return {
      ready: channelState.ready.catch(() => undefined),
      takeGrant: () => inbox.take(),
      staleThrough: (fence) => inbox.staleThrough(fence),
      wakeOnEveryGrant: () => inbox.wakeOnEveryGrant(),
      onGrant: (listener) => inbox.listen(listener),
      passOn: () => {
        // Passed on: a wake-up this waiter holds unused is not passed on again at close().
        inbox.dropFree();
        freeOne(channelState.waiters, inbox);
      },
      close: () => {
        channelState.waiters.delete(token);
        // A waiter that leaves with a free lock unclaimed passes the wake-up on.
        if (inbox.holdsFree) freeOne(channelState.waiters);
        if (channelState.waiters.size === 0 && this.channels.get(name) === channelState) {
          if (channelState.live) this.linger(name, channelState);
          else this.unsubscribe(name, channelState);
        }
      },
    };
  }

  /**
   * Whether a release published on `channel` from now on reaches this process: another waiter's
   * subscription is confirmed and still open. A waiter that watches before its attempt then
   * needs no second attempt after subscribing (see `Acquisition.watchAhead`).
   */
  subscribed(channel: string): boolean {
    // Most first attempts run while nothing is subscribed: no name to build then.
    return this.channels.size > 0 && this.channels.get(this.channelPrefix + channel)?.live === true;
  }

  /** A release in this process handed the lock to `token`: wake it without waiting for the message. */
  wake(channel: string, token: string, fencingToken: number): void {
    this.channels.get(this.channelPrefix + channel)?.waiters.get(token)?.deliver(fencingToken);
  }

  close(): void {
    for (const state of this.channels.values()) {
      clearTimeout(state.retry);
      clearTimeout(state.linger);
    }
    this.channels.clear();
    this.lingering.clear();
    this.subscriber?.close();
  }

  /** Keeps a live channel its last waiter left subscribed for `LINGER_MS` (at most `MAX_LINGERING` of them). */
  private linger(name: string, state: ChannelState): void {
    state.linger = setTimeout(() => this.unsubscribe(name, state), LINGER_MS);
    // A lingering channel never keeps the process alive; close() ends it at shutdown.
    state.linger.unref();
    this.lingering.add(name);
    if (this.lingering.size > MAX_LINGERING) {
      const oldest = this.lingering.values().next().value!;
      this.unsubscribe(oldest, this.channels.get(oldest)!);
    }
  }

  /** Forgets channel `name` and unsubscribes from it, unless a waiter subscribes again meanwhile. */
  private unsubscribe(name: string, state: ChannelState): void {
    clearTimeout(state.retry);
    clearTimeout(state.linger);
    state.linger = undefined;
    this.lingering.delete(name);
    if (this.channels.get(name) !== state) return;
    this.channels.delete(name);
    // After the caller's code has started: a woken waiter runs before the bookkeeping.
    setImmediate(() => {
      if (this.channels.has(name) || this.subscriber === undefined) return;
      this.subscriber.unsubscribe(name, state.sharded).catch(() => undefined);
    });
  }

  /**
   * Subscribes to `name` (as Redis spells it). A failed SUBSCRIBE costs the waiters their
   * wake-ups until it succeeds: they poll meanwhile, and it is retried (after 0.25 s, doubling
   * up to 4 s) for as long as the channel has waiters, instead of being kept failed.
   */
  private subscribe(name: string, state: ChannelState, failures: number): Promise<void> {
    return Promise.resolve()
      .then(async () => {
        const subscriber = this.connection();
        if (!this.cluster) {
          await subscriber.subscribe(name, false);
        } else {
          try {
            await subscriber.subscribe(name, true);
            state.sharded = true;
          } catch (error) {
            // A master older than Redis 7 publishes this channel's releases with PUBLISH.
            if (!/unknown command/i.test(String((error as Error | undefined)?.message))) throw error;
            await subscriber.subscribe(name, false);
            state.sharded = false;
          }
        }
        state.live = true;
      })
      .catch((error: unknown) => {
        if (this.channels.get(name) !== state) throw error;
        // The channel holds the user's key: quoted and escaped, as every key in a log line.
        if (failures === 0) this.logger.warn(`Subscribing to ${quoteKey(name)} failed (${(error as Error).message})${this.refusal(error)}; waiters poll until a retry succeeds.`);
        state.retry = setTimeout(() => {
          state.retry = undefined;
          if (this.channels.get(name) === state) this.subscribe(name, state, failures + 1).catch(() => undefined);
        }, Math.min(4_000, 250 * 2 ** failures));
        throw error;
      });
  }

  /**
   * What to fix when Redis refused the subscription for good (see `refusedReply`): a Redis user
   * without the release channels (NOPERM; Valkey GLIDE's driver finds it with a PUBLISH, see
   * glide-driver.ts), as Redis 7 makes a new user (`resetchannels`). Empty for any other failure.
   */
  private refusal(error: unknown): string {
    if (refusedReply(error, false) !== 'no-permission') return '';
    return (
      `: the Redis user may not subscribe to the locks' release channels; grant it &lock:* (its keyPrefix) and +subscribe +unsubscribe${this.cluster ? ' +ssubscribe +sunsubscribe' : ''}, ` +
      'as docs/deployment.md lists ("Least-privilege Redis user")'
    );
  }

  /** The subscriber connection, opened by the client's driver on first use. */
  private connection(): ReleaseSubscriber {
    this.subscriber ??= driverFor(this.client).subscriber(
      (channel, message) => {
        if (message === FREED_MESSAGE) {
          const waiters = this.channels.get(channel)?.waiters;
          if (waiters !== undefined) freeOne(waiters);
          return;
        }
        const separator = message.indexOf(':');
        const waiter = this.channels.get(channel)?.waiters.get(message.slice(0, separator));
        waiter?.deliver(Number(message.slice(separator + 1)));
      },
      // An error, not a warning: the application's own setting ends the release messages, and
      // nothing else would say so (every lock call still succeeds, slower).
      (cause, strategy = 'socket.reconnectStrategy') =>
        this.logger.error(
          `Release messages stopped: the connection this process hears lock releases on dropped, and the Redis client's reconnect strategy (${strategy}) gave it up (${cause instanceof Error ? cause.message : String(cause)}). ` +
            `Waiters find a freed lock only by polling (every ${WAITER_REFRESH_MS} ms) until a wait on a lock nobody here waits for opens it again. Give the client a ${strategy} that keeps retrying.`,
        ),
    );
    return this.subscriber;
  }
}
