import type { Cluster, Redis } from 'ioredis';
import { clusterSlot } from '../../../keys/cluster-slot.js';
import type { ReleaseSubscriber } from './redis-driver.js';
import { disconnectPromptly, promptSlotRefreshes, readyForPromptClose } from './ioredis-prompt-close.js';

/** How long a sharded subscription lost with its connection waits before it is made again (doubling, at most 4 s). */
const FIRST_RETRY = 250;
const LAST_RETRY = 4_000;

/** Whether a Cluster client routes SSUBSCRIBE to the master that owns the channel (ioredis' `shardedSubscribers`). */
export function routesShardedSubscriptions(cluster: Cluster): boolean {
  return 'shardedSubscribers' in ((cluster as { options?: object }).options ?? {});
}

/**
 * Release messages on a Cluster client whose library sends SSUBSCRIBE to its one subscriber
 * node, which answers MOVED for a channel of another master's slot: iovalkey (0.4), and ioredis
 * releases before its `shardedSubscribers` option. Each sharded subscription goes out on a
 * connection of its own to the master that owns the channel's slot (one per master, duplicated
 * from the client's connection to it, without its key prefix), by the client's slot map when it
 * is made. A connection that ends (its master went down, or failed over) takes its channels
 * with it: each is made again, on the master the slot map then names, until it succeeds or is
 * no longer wanted. A master that gives a channel's slot away ends its subscription there
 * (SUNSUBSCRIBE): when the client's slot map next changes (the MOVED reply to the next command on
 * the slot, a waiter's poll at the latest) each channel whose slot has another owner now is made
 * again there. Plain subscriptions (servers before Redis 7) go on a `duplicate()` of the client,
 * like ioredis' own.
 */
export class ShardSubscriber implements ReleaseSubscriber {
  /** A connection per master, by `host:port`, with the channels subscribed there. */
  private readonly shards = new Map<string, { connection: Redis; channels: Set<string> }>();
  /** Sharded channels wanted, each with the master it was subscribed on (undefined while not). */
  private readonly wanted = new Map<string, string | undefined>();
  private readonly retries = new Map<string, ReturnType<typeof setTimeout>>();
  private plain?: Cluster;
  private closed = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly onMessage: (channel: string, message: string) => void,
  ) {
    cluster.on('refresh', this.followSlots);
  }

  /** After a refresh of the slot map: each channel subscribed on a master that no longer owns its slot moves. */
  private readonly followSlots = (): void => {
    for (const [channel, address] of this.wanted) {
      if (address === undefined || this.cluster.slots[clusterSlot(channel)]?.[0] === address) continue;
      // The old master ended the subscription (or serves no message for it any more).
      this.shards.get(address)?.channels.delete(channel);
      this.wanted.set(channel, undefined);
      this.subscribe(channel, true).catch(() => this.retry(channel, FIRST_RETRY));
    }
  };

  async subscribe(channel: string, sharded: boolean): Promise<void> {
    if (this.closed) throw new Error('the release subscriber is closed');
    if (!sharded) {
      await this.plainConnection().subscribe(channel);
      return;
    }
    this.wanted.set(channel, undefined);
    const address = await this.ownerOf(channel);
    const shard = this.shard(address);
    await shard.connection.ssubscribe(channel);
    // Unsubscribed meanwhile: a stray subscription whose messages nobody looks up, gone with the connection.
    if (this.closed || !this.wanted.has(channel)) return;
    shard.channels.add(channel);
    this.wanted.set(channel, address);
  }

  async unsubscribe(channel: string, sharded: boolean): Promise<void> {
    if (!sharded) {
      await this.plain?.unsubscribe(channel);
      return;
    }
    const address = this.wanted.get(channel);
    this.wanted.delete(channel);
    clearTimeout(this.retries.get(channel));
    this.retries.delete(channel);
    const shard = address === undefined ? undefined : this.shards.get(address);
    if (shard === undefined || !shard.channels.delete(channel)) return;
    await shard.connection.sunsubscribe(channel);
  }

  close(): void {
    this.closed = true;
    this.cluster.off('refresh', this.followSlots);
    for (const retry of this.retries.values()) clearTimeout(retry);
    this.retries.clear();
    this.wanted.clear();
    // Without it, a Redis down or frozen kept the process alive 2 s (see `readyForPromptClose`).
    for (const { connection } of this.shards.values()) {
      readyForPromptClose(connection);
      connection.disconnect();
    }
    this.shards.clear();
    if (this.plain !== undefined) disconnectPromptly(this.plain);
  }

  private plainConnection(): Cluster {
    if (this.plain !== undefined) return this.plain;
    // No slot-refresh timer of its own, as the subscriber Cluster's (see `IoredisDriver.subscriber`).
    // Queueing while it connects, whatever the client's enableOfflineQueue: its first SUBSCRIBE goes out then.
    const plain = this.cluster.duplicate(undefined, {
      keyPrefix: '',
      redisOptions: { ...this.cluster.options.redisOptions, keyPrefix: '', enableOfflineQueue: true },
      enableOfflineQueue: true,
      slotsRefreshInterval: 0,
    });
    promptSlotRefreshes(plain);
    plain.on('message', this.onMessage);
    plain.on('error', () => undefined); // the command connection reports connection trouble
    return (this.plain = plain);
  }

  /** The address of the master serving `channel`'s slot, by the client's slot map (waiting for one). */
  private async ownerOf(channel: string): Promise<string> {
    const slot = clusterSlot(channel);
    if (this.cluster.slots[slot]?.[0] === undefined) await this.cluster.ping();
    const address = this.cluster.slots[slot]?.[0];
    if (address === undefined) throw new Error(`no master known for slot ${slot}`);
    return address;
  }

  private shard(address: string): { connection: Redis; channels: Set<string> } {
    let shard = this.shards.get(address);
    if (shard !== undefined) return shard;
    const node = this.cluster.nodes('master').find(({ options }) => `${options.host}:${options.port}` === address);
    if (node === undefined) throw new Error(`the client has no connection to master ${address}`);
    // The pool's options: no reconnection of its own (a master that went away may be gone for
    // good); the channels are made again wherever the slot map names next.
    const connection = node.duplicate({ keyPrefix: '', lazyConnect: false, retryStrategy: () => null });
    connection.on('smessage', this.onMessage);
    connection.on('error', () => undefined);
    const made = { connection, channels: new Set<string>() };
    connection.on('end', () => {
      if (this.shards.get(address) === made) this.shards.delete(address);
      for (const channel of made.channels) if (this.wanted.get(channel) === address) this.retry(channel, FIRST_RETRY);
    });
    this.shards.set(address, made);
    return made;
  }

  private retry(channel: string, delay: number): void {
    if (this.closed || !this.wanted.has(channel)) return;
    this.wanted.set(channel, undefined);
    clearTimeout(this.retries.get(channel));
    this.retries.set(
      channel,
      setTimeout(() => {
        this.retries.delete(channel);
        if (this.closed || !this.wanted.has(channel)) return;
        this.subscribe(channel, true).catch(() => this.retry(channel, Math.min(LAST_RETRY, delay * 2)));
      }, delay),
    );
  }
}
