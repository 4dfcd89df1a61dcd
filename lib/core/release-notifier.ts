import type { Redis } from 'ioredis';
import type { LockLogger } from './lock-logger.js';
import { clientKeyPrefix, type RedisClient } from './lock-scripts.js';

/** A waiter's registration: resolves `turn` when a release names it. */
export interface ReleaseWatch {
  /** Resolves when the subscription is active, so that no later release can be missed. */
  readonly ready: Promise<void>;
  /** Resolves when a release names this waiter (at once if one did since the last wait). */
  nextTurn(): Promise<void>;
  /** Stops watching; the channel is unsubscribed when its last waiter leaves. */
  close(): void;
}

interface ChannelState {
  ready: Promise<void>;
  /** Waiters on this channel by token: each release wakes exactly the one it names. */
  waiters: Map<string, () => void>;
}

/**
 * One subscriber connection per process, shared by every waiter: a waiter subscribes to its
 * lock's release channel before retrying, and a release message carries the token of the one
 * waiter whose turn it is, so a release wakes one waiter instead of all of them.
 */
export class ReleaseNotifier {
  private subscriber?: Redis;
  private readonly channels = new Map<string, ChannelState>();
  /** Channel names as Redis sees them: scripts publish on a key, which ioredis prefixes. */
  private readonly channelPrefix: string;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: LockLogger,
  ) {
    this.channelPrefix = clientKeyPrefix(client);
  }

  /** Whether waiters can be woken by messages (not yet on Redis Cluster: they poll there). */
  get enabled(): boolean {
    return !(this.client as { isCluster?: boolean }).isCluster;
  }

  watch(channel: string, token: string): ReleaseWatch {
    const name = this.channelPrefix + channel;
    let state = this.channels.get(name);
    if (state === undefined) {
      const subscriber = this.connection();
      state = { ready: subscriber.subscribe(name).then(() => undefined), waiters: new Map() };
      // A failed subscription only costs the waiter its wake-ups; its timers still run.
      state.ready.catch((error: unknown) => this.logger.warn(`Subscribing to ${name} failed (${(error as Error).message}); waiters poll instead.`));
      this.channels.set(name, state);
    }
    const channelState = state;
    // A release may name the waiter while its attempt is still in flight: remember it, so the
    // wait that follows ends at once instead of missing it.
    let woken = false;
    let endWait: (() => void) | undefined;
    channelState.waiters.set(token, () => {
      if (endWait === undefined) {
        woken = true;
        return;
      }
      const resolve = endWait;
      endWait = undefined;
      resolve();
    });
    return {
      ready: channelState.ready.catch(() => undefined),
      nextTurn: () => {
        if (woken) {
          woken = false;
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => (endWait = resolve));
      },
      close: () => {
        channelState.waiters.delete(token);
        if (channelState.waiters.size === 0 && this.channels.get(name) === channelState) {
          this.channels.delete(name);
          this.subscriber?.unsubscribe(name).catch(() => undefined);
        }
      },
    };
  }

  /** A release in this process named `token`: wake that waiter without waiting for the message. */
  wake(channel: string, token: string): void {
    this.channels.get(this.channelPrefix + channel)?.waiters.get(token)?.();
  }

  close(): void {
    this.channels.clear();
    this.subscriber?.disconnect();
  }

  private connection(): Redis {
    if (this.subscriber === undefined) {
      const subscriber = (this.client as Redis).duplicate();
      subscriber.on('message', (channel: string, token: string) => this.channels.get(channel)?.waiters.get(token)?.());
      subscriber.on('error', () => undefined); // the command connection reports connection trouble
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}
