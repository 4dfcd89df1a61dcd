import type { Redis } from 'ioredis';
import { LockNotReplicatedError } from '../../../errors/lock-not-replicated.error.js';
import type { ReplicaWait } from '../../options/wait-for-replicas.js';
import type { AcquireReply } from '../lock-replies.js';
import { IoRedisDriver } from './drivers/ioredis-driver.js';
import { disconnectPromptly, promptSentinelClients } from './drivers/ioredis-prompt-close.js';
import type { RedisDriver } from './drivers/redis-driver.js';

/**
 * The module option `waitForReplicas`: acquire scripts go out on a connection of their own, and
 * each one that acquired is followed there by `WAIT <replicas> <timeout>`; so are the fenced
 * writes and reads for update of the module's `FencedRedis` (see `RedisFencedStore`). WAIT
 * covers the writes of the connection it runs on, and blocks that connection until it answers:
 * on the shared connection it would hold up every renewal and release of the process behind it
 * (for a whole `timeout` while a replica is down), so only acquisitions and fenced writes queue
 * behind one another here. A reconnection between the script and its WAIT (a failover) would run
 * the WAIT on a connection that wrote nothing, which answers at once: it counts as not replicated.
 */
export class ReplicaWaiter {
  private readonly connection: Redis;
  /** The scripts' driver over the dedicated connection. */
  readonly driver: RedisDriver;
  /** Connections lost so far: a script and its WAIT must share one. */
  private closes = 0;

  constructor(
    client: Redis,
    private readonly wait: ReplicaWait,
  ) {
    // The same options (keyPrefix, Sentinel, TLS, database), so the scripts see the same keys.
    // A fresh connection, still connecting when the first acquire comes: an application's
    // fail-fast `enableOfflineQueue: false` would refuse it. Made unconnected, as the module's
    // own connection is (see `openConnection`): it connects when the application starts
    // (`connect`), or at a first acquire before, and a startup that fails first leaves no socket.
    this.connection = client.duplicate({ enableOfflineQueue: true, lazyConnect: true });
    promptSentinelClients(this.connection);
    this.connection.on('error', () => undefined); // the command connection reports connection trouble
    this.connection.on('close', () => this.closes++);
    this.driver = new IoRedisDriver(this.connection);
  }

  /**
   * Sends one acquire (`send`, on `driver`) and, when it acquired, waits for the replicas. A
   * lock that did not reach them is given back (`giveBack`, owner-checked) before the call
   * fails with `LockNotReplicatedError`.
   */
  async acquire<T extends AcquireReply>(lockKey: string, send: () => Promise<T>, giveBack: () => Promise<unknown>): Promise<T> {
    const closes = this.closes;
    const reply = await send();
    if (!reply.acquired) return reply;
    let reached: number;
    try {
      reached = Number(await this.connection.wait(this.wait.replicas, this.wait.timeout));
    } catch (error) {
      await giveBack().catch(() => undefined);
      throw error;
    }
    if (this.closes !== closes) reached = 0;
    if (reached >= this.wait.replicas) return reply;
    await giveBack().catch(() => undefined);
    throw new LockNotReplicatedError(lockKey, reached, this.wait.replicas, this.wait.timeout);
  }

  /** How many replicas must confirm, and how long WAIT may block (the module's `waitForReplicas`). */
  get required(): ReplicaWait {
    return this.wait;
  }

  /**
   * Sends a fenced write or read for update (`send`, on `driver`) and, when it changed the data
   * or its token (`changed`), waits for the replicas as an acquisition does: `reached` is how many
   * confirmed it (none across a reconnection), absent when the script changed nothing (a
   * refusal). Nothing can be given back: the caller reports a shortfall. `bound` ends the wait
   * for WAIT's answer (the module's close: a Redis frozen after running the script never answers
   * it); a WAIT that fails or is so ended rejects with `ReplicaWaitFailed`, the script's change made.
   */
  async replicate<T>(send: () => Promise<T>, changed: (reply: T) => boolean, bound: (wait: Promise<unknown>) => Promise<unknown> = (wait) => wait): Promise<{ reply: T; reached?: number }> {
    const closes = this.closes;
    const reply = await send();
    if (!changed(reply)) return { reply };
    let reached: number;
    try {
      reached = Number(await bound(this.connection.wait(this.wait.replicas, this.wait.timeout)));
    } catch (error) {
      throw new ReplicaWaitFailed(error);
    }
    return { reply, reached: this.closes !== closes ? 0 : reached };
  }

  /** Connects, unless a first acquire did already or it was closed. */
  connect(): void {
    // A failure is the command connection's to report (see the `error` listener above).
    if (this.connection.status === 'wait') this.connection.connect().catch(() => undefined);
  }

  close(): void {
    // Without it, a Redis down or frozen kept the process alive 2 s (see `disconnectPromptly`).
    disconnectPromptly(this.connection);
  }
}

/** A WAIT after a fenced write or read for update that failed, or whose answer the close stopped waiting for: the script ran. */
export class ReplicaWaitFailed extends Error {
  constructor(readonly reason: unknown) {
    super(`WAIT failed (${(reason instanceof Error ? reason.message : String(reason)).replace(/\.$/, '')})`);
  }
}
