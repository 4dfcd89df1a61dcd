import { InvalidLockOptionsError } from '../../../../errors/invalid-lock-options.error.js';
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { clusterSlot } from '../../../keys/cluster-slot.js';
import { COMMANDS, type ScriptName } from '../lock-lua.js';
import { routesShardedSubscriptions, ShardSubscriber } from './ioredis-shard-subscriber.js';
import { TickWriteBatching, type BatchedConnection } from './tick-write-batching.js';
import { CLOSE_WAIT_MS, disconnectPromptly, promptSentinelClients, promptShardedSubscribers, promptSlotRefreshes } from './ioredis-prompt-close.js';
import { flatPairs, isNoScript, scriptError, throwScriptError, withoutArguments, writablePing, type BareScriptCall, type LuaScript, type PingTarget, type ReadCommand, type RedisDriver, type RedisNode, type ReleaseSubscriber } from './redis-driver.js';

export type IoRedisClient = Redis | Cluster;

type Eval = (script: string, numberOfKeys: number, ...args: (string | number | readonly (string | number)[])[]) => Promise<unknown>;

/** An ioredis client (5 or 6) or an iovalkey one (its fork): they alone have `defineCommand`. */
export function isIoRedisClient(client: unknown): client is IoRedisClient {
  return typeof (client as { defineCommand?: unknown } | null)?.defineCommand === 'function';
}

/**
 * ioredis, the default, and iovalkey, its fork with the same API. Scripts go out as plain
 * EVALSHA calls, not through ioredis' `defineCommand` (see `bareScript`), and nothing is defined
 * on the client.
 */
export class IoRedisDriver implements RedisDriver {
  readonly keyPrefix: string;
  readonly isCluster: boolean;

  constructor(
    readonly client: IoRedisClient,
    option = 'redis',
  ) {
    // ioredis adds its `keyPrefix` to every key of a command (it reads the key count of EVALSHA).
    type Options = { keyPrefix?: string; stringNumbers?: boolean; autoResendUnfulfilledCommands?: boolean };
    const options = (client as { options?: Options & { redisOptions?: Options } }).options;
    // Refused at startup: every integer reply would come back as a string, and the scripts answer
    // integers (fencing tokens, reply codes), so every lock would be read as not taken while Redis
    // holds it. A script's string reply cannot be told from an integer's once ioredis read it.
    if (options?.stringNumbers === true || options?.redisOptions?.stringNumbers === true) {
      throw new InvalidLockOptionsError(
        option,
        client,
        'a client created without `stringNumbers: true`, which answers Redis integers as strings where the lock scripts answer integers (fencing tokens, reply codes); for instance `client.duplicate({ stringNumbers: false })` (a Cluster: `redisOptions: { stringNumbers: false }`)',
      );
    }
    // Refused too: such a client drops the commands a closed connection left unanswered without
    // ever settling them (ioredis), so a release (which nothing else bounds) would hang for good.
    if (options?.autoResendUnfulfilledCommands === false || options?.redisOptions?.autoResendUnfulfilledCommands === false) {
      throw new InvalidLockOptionsError(
        option,
        client,
        'a client created without `autoResendUnfulfilledCommands: false`: ioredis then drops the commands a closed connection left unanswered without ever settling them, so a release could wait for ever; for instance `client.duplicate({ autoResendUnfulfilledCommands: true })`',
      );
    }
    this.isCluster = (client as { isCluster?: boolean }).isCluster === true;
    // Refused too: auto-pipelining groups a tick's commands by their first argument's slot, which
    // for EVALSHA / EVAL is the script's hash, not a key: the script calls of locks on different
    // masters made in one tick go into one pipeline, which the Cluster client then fails whole
    // (releases unanswered, multi-key locks across masters refused).
    const pipelining = client as { options?: { enableAutoPipelining?: boolean; autoPipeliningIgnoredCommands?: readonly string[] } };
    const autoPipelinedCluster = this.isCluster && pipelining.options?.enableAutoPipelining === true;
    if (autoPipelinedCluster && !['evalsha', 'eval'].every((name) => pipelining.options?.autoPipeliningIgnoredCommands?.includes(name))) {
      throw new InvalidLockOptionsError(
        option,
        client,
        "a Cluster client whose auto-pipelining leaves the lock scripts out (`autoPipeliningIgnoredCommands: ['evalsha', 'eval']` beside `enableAutoPipelining: true`): it groups script calls by the script's hash, not by their key's slot, and fails the calls of locks on different masters made in one tick together",
      );
    }
    // A client closed with quit() or disconnect() is never connected again, and one in subscriber
    // mode refuses every other command: every lock call would fail, as Redis not answering.
    const state = client as { status?: string; condition?: { subscriber?: unknown } };
    if (state.status === 'end') {
      throw new InvalidLockOptionsError(option, client, 'an open client (this one was closed with quit() or disconnect(), which ioredis never undoes)');
    }
    if (state.condition?.subscriber) {
      throw new InvalidLockOptionsError(option, client, 'a client not in subscriber mode, which refuses every command but (UN)SUBSCRIBE and PING (subscribe on a `duplicate()` of it)');
    }
    this.keyPrefix = options?.keyPrefix ?? options?.redisOptions?.keyPrefix ?? '';
    this.scaledReads = this.isCluster && ((client as Cluster).options.scaleReads ?? 'master') !== 'master';
    const own: readonly BatchedConnection[] = [client as unknown as BatchedConnection];
    this.batching = new TickWriteBatching(this.isCluster ? () => (client as Cluster).nodes('master') as unknown as BatchedConnection[] : () => own);
  }

  /** The commands sent in one tick go out in a few writes per connection (see `TickWriteBatching`). */
  private readonly batching: TickWriteBatching;

  /** A Cluster client whose `scaleReads` sends read-only commands to replicas too (see `pipeline`). */
  private readonly scaledReads: boolean;

  /** How often a connection that was up closed since first asked (undefined: not counting yet). */
  private resets?: number;

  /**
   * How often a connection of the client closed after it was up (ready): ioredis sends the
   * commands such a connection left unanswered again once it reconnects
   * (`autoResendUnfulfilledCommands`), so a script whose reply was lost may run twice. Counted
   * from the first call (listeners per driver that asks: the lock store's), on every node
   * connection of a Cluster, which resends as well.
   */
  connectionResets(): number {
    if (this.resets === undefined) {
      this.resets = 0;
      if (this.isCluster) {
        const cluster = this.client as Cluster;
        for (const node of cluster.nodes()) this.countResets(node);
        cluster.on('+node', (node: Redis) => this.countResets(node));
      } else {
        this.countResets(this.client as Redis);
      }
    }
    return this.resets;
  }

  /**
   * Only a close after `ready` counts: commands are written only to a ready connection. One sent
   * while the connection was down waits in ioredis' offline queue and runs once, however many
   * reconnections fail meanwhile, so a refusal of it is an answer, not a resend's.
   */
  private countResets(connection: Redis): void {
    let up = connection.status === 'ready';
    connection.on('ready', () => (up = true));
    connection.on('close', () => {
      if (!up) return;
      up = false;
      this.resets! += 1;
    });
  }

  /**
   * A script sent as a plain EVALSHA, and EVAL when the server has not cached it yet (it is
   * cached from then on). ioredis' `defineCommand` wrapper does the same, but copies the
   * arguments twice and adds a promise and a closure per call: about 0.3 us of CPU per call.
   * ioredis still routes the command by its first key on a Cluster and adds the `keyPrefix`.
   */
  bareScript(name: ScriptName): BareScriptCall {
    const { numberOfKeys, lua } = COMMANDS[name];
    if (numberOfKeys === null) throw new Error(`bareScript(${name}): the script takes its key count first`);
    const sha = createHash('sha1').update(lua).digest('hex');
    const evalsha = this.client.evalsha.bind(this.client) as unknown as Eval;
    const evalScript = this.client.eval.bind(this.client) as unknown as Eval;
    return {
      send: (...args) => {
        if (this.stranded()) return closedConnection();
        this.batching.hold();
        return this.batching.sent(evalsha(sha, numberOfKeys, ...args));
      },
      resend: (...args) => {
        if (this.stranded()) return closedConnection();
        this.batching.hold();
        return this.batching.sent(evalScript(lua, numberOfKeys, ...args));
      },
    };
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], whole = false, mayResend?: () => boolean): Promise<unknown> {
    // ioredis adds its keyPrefix to the declared keys (it reads the key count). A `catch`, not an
    // async function: every semaphore and read-write lock call comes this way, and an async frame
    // costs a promise and a microtask more.
    if (this.stranded()) return closedConnection();
    this.batching.hold();
    // One array, which ioredis flattens: spread into the call, a FencedRedis hset() of many
    // fields (over 100,000 arguments) overflows the stack.
    const all = (keys as (string | number)[]).concat(args);
    let reply: Promise<unknown>;
    try {
      // Sent whole at shutdown only: the handler costs nothing on the usual path.
      if (whole) return this.batching.sent((this.client.eval as unknown as Eval)(script.lua, keys.length, all)).catch(throwScriptError);
      reply = this.batching.sent((this.client.evalsha as unknown as Eval)(script.sha, keys.length, all));
    } catch (error) {
      // As from the async function this was: a client that throws at once answers a rejection.
      return Promise.reject(error);
    }
    return reply.catch((error: unknown) => {
      if (!isNoScript(error) || mayResend?.() === false) throw scriptError(error);
      this.batching.hold();
      return this.batching.sent((this.client.eval as unknown as Eval)(script.lua, keys.length, all)).catch(throwScriptError);
    });
  }

  async setIfAbsent(key: string, value: string, ttl: number): Promise<boolean> {
    if (this.stranded()) return closedConnection();
    this.batching.hold();
    try {
      return (await this.batching.sent(this.client.set(key, value, 'PX', ttl, 'NX'))) === 'OK';
    } catch (error) {
      // The value is an owner token (see `withoutArguments`).
      withoutArguments(error);
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    if (this.stranded()) return closedConnection();
    this.batching.hold();
    return (await this.batching.sent(this.client.exists(key))) === 1;
  }

  deleteField(key: string, field: string): Promise<number> {
    if (this.stranded()) return closedConnection();
    this.batching.hold();
    return this.batching.sent(this.client.hdel(key, field));
  }

  async readLock(lock: string, fence: string, waiters: string): Promise<[string | null, number, string | null, number]> {
    if (this.stranded()) return closedConnection();
    const replies = await this.pipeline([
      ['get', lock],
      ['pttl', lock],
      ['get', fence],
      ['zcard', waiters],
    ]).exec();
    return (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string | null, number, string | null, number];
  }

  async read(commands: readonly ReadCommand[]): Promise<unknown[]> {
    if (this.stranded()) return closedConnection();
    // ioredis adds its keyPrefix to each key, and answers HGETALL with an object.
    const replies = await this.pipeline(commands.map(([verb, key]) => [verb.toLowerCase(), key])).exec();
    return (replies ?? []).map(([error, value], i) => {
      if (error) throw error;
      return commands[i]![0] === 'HGETALL' ? flatPairs(value) : value;
    });
  }

  /**
   * Reads of keys of one slot, pipelined, from the slot's master. A Cluster client with
   * `scaleReads` (the application's choice for its own reads) would send them to a replica, which
   * may not have applied the last writes yet: `inspect()` answered a lock this process had just
   * taken as free. Its scripts go to the master already (EVALSHA is no read-only command). The
   * pipeline's preferred node (`preferKey`, which ioredis 5, 6 and iovalkey set themselves on a
   * MOVED or ASK reply) is the master the slot map names; without one yet, ioredis routes it.
   */
  private pipeline(commands: string[][]): ReturnType<IoRedisClient['pipeline']> {
    const pipeline = this.client.pipeline(commands);
    const key = commands[0]?.[1];
    if (!this.scaledReads || key === undefined) return pipeline;
    const master = (this.client as Cluster).slots[clusterSlot(this.keyPrefix + key)]?.[0];
    if (master !== undefined) (pipeline as unknown as { preferKey?: string }).preferKey = master;
    return pipeline;
  }

  ping(): Promise<unknown> {
    if (this.stranded()) return closedConnection();
    return this.client.ping();
  }

  /**
   * `quit()` or `disconnect()`: ioredis sends nothing from then on (unless `connect()` is called
   * again). Its status says `end` only once the socket closed; `manuallyClosing` (not in its
   * typings) is set from the call on, and cleared then.
   *
   * NOTE: the commands above (and a health check's PING) refuse at once, as ioredis does once the
   * client ended, what a client its owner closed and not ready any more is given (`stranded`):
   * ioredis queues it offline, and a client closed while it waited to reconnect (its socket closed
   * already) never ends, for want of the close that would end it (redis/ioredis#1247): it stays
   * `reconnecting` for good, its offline queue never sent nor refused. A lock call waited out its
   * waitTimeout, then was told Redis did not answer, where a client closed while connected ends it
   * at once, naming the closed client. `status` is read first: one property per command on the
   * usual path. A client still `ready` (a `quit()` on its way) is left alone: ioredis refuses its
   * commands as the socket closes.
   */
  closed(): boolean {
    return this.client.status === 'end' || (this.client as unknown as { manuallyClosing?: unknown }).manuallyClosing === true;
  }

  /** A client its owner closed that is not ready any more: ioredis would queue a command for good (see `closed`). */
  private stranded(): boolean {
    return this.client.status !== 'ready' && this.closed();
  }

  async masters(): Promise<RedisNode[]> {
    if (!this.isCluster) return [ioredisNode(this.client as Redis)];
    const cluster = this.client as Cluster;
    // Not connected yet: any command waits for the slot map (or fails like any command).
    if (cluster.nodes('master').length === 0) await cluster.ping();
    return cluster.nodes('master').map(ioredisNode);
  }

  slotOwner(slot: number): string | undefined {
    return (this.client as Cluster).slots?.[slot]?.[0];
  }

  /**
   * ioredis reads the map from its nodes in turn, each within its `slotsRefreshTimeout` (a frozen
   * node's question times out, the next node is asked), and runs one refresh at a time: a call
   * during one waits for it. Commands sent from then on go to the master the new map names.
   */
  refreshSlots(): Promise<void> {
    if (!this.isCluster) return Promise.resolve();
    return new Promise((resolve, reject) => (this.client as Cluster).refreshSlotsCache((error) => (error ? reject(error) : resolve())));
  }

  /**
   * A `duplicate()` of the client without its `keyPrefix`: channel names are already spelled as
   * Redis sees them (the scripts publish on a declared key, which ioredis prefixed), and ioredis
   * would prefix a SSUBSCRIBE channel a second time.
   */
  subscriber(onMessage: (channel: string, message: string) => void, onGivenUp?: (cause: unknown, strategy?: string) => void): ReleaseSubscriber {
    if (this.isCluster && !routesShardedSubscriptions(this.client as Cluster)) return new ShardSubscriber(this.client as Cluster, onMessage);
    // ioredis routes SSUBSCRIBE to the node that owns the channel's slot only with
    // `shardedSubscribers`; a plain SUBSCRIBE still goes to its one subscriber node.
    // No ready check (INFO) on this connection: ioredis sends a SUBSCRIBE asked for while the
    // connection's handshake is unanswered at once, which puts it in subscriber mode, where the
    // INFO is refused; ioredis 5 then reconnects and does not subscribe those channels again,
    // though their SUBSCRIBE resolved. A subscriber has no use for the check (whether the server
    // is still loading its data): it runs no command on data.
    // Off a Cluster, the channels are subscribed again after a reconnection by us, not by ioredis:
    // its own resubscription is a promise nobody handles, rejected (an unhandled rejection, which
    // ends a Node process by default) when the connection closes before Redis answered it.
    let connection = this.isCluster
      ? (this.client as Cluster).duplicate(undefined, {
          keyPrefix: '',
          // The node connections, and those ioredis opens from a node's options to refresh the
          // slot map, are ours here: they wait at most CLOSE_WAIT_MS at close (see there).
          redisOptions: { ...(this.client as Cluster).options.redisOptions, keyPrefix: '', enableReadyCheck: false, disconnectTimeout: CLOSE_WAIT_MS, enableOfflineQueue: true },
          // A fresh connection: its first (S)SUBSCRIBE is sent while it connects (an application's
          // fail-fast `enableOfflineQueue: false` would refuse it).
          enableOfflineQueue: true,
          shardedSubscribers: true,
          // It follows the command client's refreshes (`followSlots`), on no timer of its own: one
          // inherited from the client handed in is armed again by the round under way at the
          // close, once it fails, and by each later round, and would keep the process alive.
          slotsRefreshInterval: 0,
        })
      : (this.client as Redis).duplicate({ keyPrefix: '', enableReadyCheck: false, autoResubscribe: false, enableOfflineQueue: true });
    promptSentinelClients(connection);
    promptShardedSubscribers(connection);
    promptSlotRefreshes(connection);
    const channels = new Set<string>();
    let closed = false;
    /** Off a Cluster: ioredis gave the connection up, and the next SUBSCRIBE makes it again (see `reopen`). */
    let givenUp = false;
    const watchPlain = (made: Redis): void => {
      let connected = false;
      let lastError: unknown;
      made.on('ready', () => {
        // ioredis may report ready once more after a close of ours (a handshake answered late).
        if (closed || made !== connection) return;
        if (connected && channels.size > 0) made.subscribe(...channels).catch(() => undefined);
        connected = true;
      });
      made.on('error', (error: unknown) => (lastError = error));
      // The client's `retryStrategy`, which `duplicate()` copied, stopped (a fail-fast `() => null`,
      // or a bounded number of tries): ioredis refuses every command from now on. A pub/sub
      // connection is the idle one a proxy's or load balancer's idle timeout ends first, while
      // the command connection stays up: no release message would come for the application's life.
      made.on('end', () => {
        if (closed || made !== connection) return;
        givenUp = true;
        onGivenUp?.(lastError ?? new Error('Connection is closed.'), 'retryStrategy');
      });
    };
    if (!this.isCluster) watchPlain(connection as Redis);
    /** Off a Cluster: a new duplicate for the one ioredis gave up, subscribed to every channel still wanted. */
    const reopen = (): void => {
      givenUp = false;
      const made = (this.client as Redis).duplicate({ keyPrefix: '', enableReadyCheck: false, autoResubscribe: false, enableOfflineQueue: true });
      promptSentinelClients(made);
      made.on('message', onMessage);
      connection = made;
      watchPlain(made);
      if (channels.size > 0) made.subscribe(...channels).catch(() => undefined);
    };
    // A master that gives a slot away ends the sharded subscriptions of its channels; ioredis
    // makes them again on the new owner once this connection's slot map changes, which nothing
    // would tell it (it sends no command on keys, and refreshes the map on no timer by default):
    // the command client's refresh (on a MOVED reply, to a waiter's poll at the latest) does.
    const followSlots = (): void => (connection as Cluster).refreshSlotsCache();
    if (this.isCluster) (this.client as Cluster).on('refresh', followSlots);
    connection.on('message', onMessage);
    connection.on('smessage', onMessage);
    connection.on('error', () => undefined); // the command connection reports connection trouble
    // A Cluster's plain SUBSCRIBEs go on a subscriber connection of its own, opened by the first,
    // whose ready check ioredis always makes; ioredis 5 sends it once its CLIENT SETNAME and
    // SETINFO are answered, after any SUBSCRIBE asked for meanwhile: refused in subscriber mode,
    // the connection is dropped and the SUBSCRIBE that waited for the handshake rejected. So the
    // others wait until the first is answered (it waits for the handshake, then goes out).
    let opening: Promise<unknown> | undefined;
    const subscribePlain = async (channel: string): Promise<void> => {
      if (!this.isCluster) {
        if (givenUp && !closed) reopen();
        channels.add(channel);
        await connection.subscribe(channel);
        return;
      }
      if (opening === undefined) {
        const first = (opening = connection.subscribe(channel));
        // A failed first leaves the next SUBSCRIBE to open the connection.
        await first.catch((error: unknown) => {
          if (opening === first) opening = undefined;
          throw error;
        });
        return;
      }
      await opening.catch(() => undefined);
      await connection.subscribe(channel);
    };
    return {
      subscribe: async (channel, sharded) => {
        await (sharded ? (connection as Cluster).ssubscribe(channel) : subscribePlain(channel));
      },
      unsubscribe: async (channel, sharded) => {
        channels.delete(channel);
        await (sharded ? (connection as Cluster).sunsubscribe(channel) : connection.unsubscribe(channel));
      },
      close: () => {
        closed = true;
        if (this.isCluster) (this.client as Cluster).off('refresh', followSlots);
        disconnectQuietly(connection);
      },
    };
  }

  async pingTargets(): Promise<PingTarget[]> {
    if (!this.isCluster) {
      const client = this.client as Redis;
      // A Sentinel client's options name the sentinels, not the master it reached: its socket's
      // peer is that master (still the frozen one, until a failover moves the client).
      const address = (client.options as { sentinels?: unknown }).sentinels ? peerOf(client) : addressOf(client);
      return [{ address, ping: () => (this.stranded() ? closedConnection() : writablePing((args) => client.call(args[0]!, ...args.slice(1)))) }];
    }
    const cluster = this.client as Cluster;
    if (cluster.nodes('master').length === 0) await cluster.ping();
    // NOTE: ioredis drops a node from `nodes()` when its connection ends; the slot map still
    // names it as long as the cluster does (no replica took its slots over).
    const addresses = new Set<string>();
    for (const owners of cluster.slots) if (owners?.[0] !== undefined) addresses.add(owners[0]);
    for (const node of cluster.nodes('master')) {
      const address = addressOf(node);
      if (address !== undefined) addresses.add(address);
    }
    return [...addresses].sort().map((address) => ({
      address,
      ping: () => {
        const node = cluster.nodes('master').find((each) => addressOf(each) === address);
        return node === undefined ? Promise.reject(new Error('the client has no connection to this master')) : writablePing((args) => node.call(args[0]!, ...args.slice(1)));
      },
    }));
  }
}

/** What ioredis answers a command of a client that ended (see `IoRedisDriver.closed`). */
function closedConnection(): Promise<never> {
  return Promise.reject(new Error('Connection is closed.'));
}

/** A server's `host:port` (or socket path) from its ioredis options. */
function addressOf(node: Redis): string | undefined {
  const { host, port, path } = node.options as { host?: string; port?: number; path?: string };
  if (path) return path;
  return host === undefined || port === undefined ? undefined : `${host}:${port}`;
}

/** The `host:port` an ioredis connection's socket is connected to, if it is. */
function peerOf(client: Redis): string | undefined {
  const { remoteAddress: host, remotePort: port } = (client as { stream?: { remoteAddress?: string; remotePort?: number } }).stream ?? {};
  if (host === undefined || port === undefined) return undefined;
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function ioredisNode(node: Redis): RedisNode {
  return {
    info: (section) => node.info(section),
    clusterNodes: async () => String(await node.call('CLUSTER', 'NODES')),
    scan: (cursor, pattern, count) => node.scan(cursor, 'MATCH', pattern, 'COUNT', count),
  };
}

/** An ioredis queue of commands (a `Denque`; not in its typings). */
interface CommandQueue {
  toArray(): { command?: { promise?: Promise<unknown> } }[];
}

/**
 * Disconnects a subscriber connection, its commands still queued marked as handled: a connection
 * that came back subscribes to its channels again with promises ioredis itself never handles,
 * and a disconnect before Redis answered rejects them, an unhandled rejection that ends a Node
 * process by default. Our own SUBSCRIBEs are awaited, and still see the rejection. A Redis down
 * or frozen does not keep the process alive after it (see `disconnectPromptly`).
 */
function disconnectQuietly(connection: Redis | Cluster): void {
  const internals = connection as unknown as { commandQueue?: CommandQueue; offlineQueue?: CommandQueue; subscriber?: { subscriber?: Redis }; nodes?: () => Redis[] };
  const redises: unknown[] = [connection, internals.subscriber?.subscriber];
  if (typeof internals.nodes === 'function' && !('commandQueue' in internals)) redises.push(...internals.nodes());
  for (const redis of redises) {
    const { commandQueue, offlineQueue } = (redis ?? {}) as { commandQueue?: CommandQueue; offlineQueue?: CommandQueue };
    for (const queue of [commandQueue, offlineQueue]) for (const item of queue?.toArray?.() ?? []) item.command?.promise?.catch(() => undefined);
  }
  disconnectPromptly(connection);
}
