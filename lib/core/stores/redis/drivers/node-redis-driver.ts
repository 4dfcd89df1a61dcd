import { createHash } from 'node:crypto';
import { COMMANDS, type ScriptName } from '../lock-lua.js';
import type { NodeRedisClient, NodeRedisKind } from './node-redis-client.js';
import { reconnectDelay } from './node-redis-reconnect.js';
import { flatPairs, ReconnectGivenUpError, scriptError, throwScriptError, writablePing, type BareScriptCall, type LuaScript, type PingTarget, type ReadCommand, type RedisDriver, type RedisNode, type ReleaseSubscriber } from './redis-driver.js';
import { setImmediate } from '../../../time/real-timers.js';

type Args = string[];
type Send = (firstKey: string | undefined, args: Args) => Promise<unknown>;
type Listener = (message: string, channel: string) => void;

/** What the driver uses of a node-redis connection beyond `NodeRedisClient` (all of v5 and v6 have it). */
interface PubSubConnection {
  readonly isOpen: boolean;
  connect(): Promise<unknown>;
  destroy(): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  on(event: 'connect', listener: () => void): unknown;
  subscribe(channel: string, listener: Listener): Promise<unknown>;
  unsubscribe(channel: string, listener: Listener): Promise<unknown>;
  sSubscribe(channel: string, listener: Listener): Promise<unknown>;
  sUnsubscribe(channel: string, listener: Listener): Promise<unknown>;
  /** A Cluster client's (an `EventEmitter`): see `RESUBSCRIBE_LISTENERS_EVENT`. */
  prependListener?(event: string, listener: (moved: MovedListeners) => void): unknown;
}

/** The listeners of one kind of subscription node-redis moves, by channel. */
type MovedListeners = Partial<Record<'CHANNELS' | 'SHARDED', Map<string, { buffers: Set<unknown>; strings: Set<unknown> }>>>;

/**
 * node-redis' Cluster client (5 and 6) emits this with the listeners of a node it stopped using
 * (a master that died, once the topology refresh shows its replica promoted; a node whose
 * resubscription answered MOVED), after taking them off that node's pub/sub client and before
 * destroying it; its own handler, registered at construction, subscribes each listener again
 * through the client (SSUBSCRIBE to the slot's new owner). Internal: `RESUBSCRIBE_LISTENERS_EVENT`
 * of `@redis/client`'s cluster-slots.
 */
const RESUBSCRIBE_LISTENERS_EVENT = '__resubscribeListeners';

/** node-redis 6 gives every client this command timeout unless the application sets one. */
const NODE_REDIS_DEFAULT_TIMEOUT = 5_000;

/**
 * The options of every command the driver sends. `typeMapping` resets a client's
 * `withTypeMapping()` to node-redis' default reply types. `timeout` is 0 unless the application
 * set one on the client: node-redis 6's default (5 s) bounds only a command's wait to be written
 * and costs every command an `AbortSignal.timeout()` and its listeners, more than half the Node
 * CPU of a lock taken and released, and the library bounds its own waits (an attempt by the wait
 * timeout, a renewal by the lease, shutdown by its grace), as on ioredis and node-redis 5, which
 * have none. A timeout the application configured (`commandOptions.timeout`, or
 * `withCommandOptions()` on the client handed in) is its decision, and the library's commands
 * keep it, as ioredis' `commandTimeout` applies to them.
 */
function commandOptions(client: NodeRedisClient): Readonly<{ typeMapping: object; timeout: number }> {
  return Object.freeze({ typeMapping: Object.freeze({}), timeout: configuredTimeout(client) ?? 0 });
}

function configuredTimeout(client: NodeRedisClient): number | undefined {
  type WithOptions = { commandOptions?: { timeout?: unknown } };
  const shape = client as unknown as {
    _commandOptions?: { timeout?: unknown };
    commandOptions?: { timeout?: unknown };
    options?: WithOptions;
    _options?: WithOptions;
  };
  // The effective options (a proxy's own, or the client's), then what the application passed.
  const effective = shape._commandOptions?.timeout ?? shape.commandOptions?.timeout;
  if (typeof effective !== 'number' || !(effective > 0)) return undefined;
  const given = (shape.options ?? shape._options)?.commandOptions?.timeout;
  return effective === NODE_REDIS_DEFAULT_TIMEOUT && given !== NODE_REDIS_DEFAULT_TIMEOUT ? undefined : effective;
}

interface ClusterShape {
  readonly masters: { id: string; host?: string; port?: number }[];
  readonly slots: ({ master?: { id: string } } | undefined)[];
  nodeClient(node: { id: string }): Promise<{ sendCommand(args: Args): Promise<unknown> }>;
}

/**
 * node-redis (`redis` v5, v6), for a client handed in. Everything goes through `sendCommand`,
 * which takes the command as Redis does (no key prefixing, no reply transformation), so the
 * replies match ioredis' and the store reads them the same way. Scripts are sent as EVALSHA of
 * their SHA1, with EVAL when the node answers NOSCRIPT (a node that restarted, or a script
 * flush), which also loads the script there for the next call.
 */
export class NodeRedisDriver implements RedisDriver {
  readonly keyPrefix: string;
  readonly isCluster: boolean;
  private readonly send: Send;
  /**
   * A plain client's `end` was heard: node-redis (5, 6) emits it when its owner closes it
   * (close(), destroy(), quit(), disconnect()), not when its reconnect strategy gives it up.
   */
  private ended = false;

  constructor(
    readonly client: NodeRedisClient,
    private readonly kind: NodeRedisKind,
  ) {
    // node-redis 6 has an ioredis-like `keyPrefix` for keys (not channels); `sendCommand` does not add it.
    const prefix = (client as { _keyPrefix?: unknown })._keyPrefix;
    this.keyPrefix = prefix === undefined || prefix === null ? '' : String(prefix);
    this.isCluster = kind === 'cluster';
    if (kind === 'client') (client as { on?: (event: 'end', listener: () => void) => unknown }).on?.('end', () => (this.ended = true));
    const options = commandOptions(client);
    const raw = client as unknown as {
      sendCommand(...args: unknown[]): Promise<unknown>;
    };
    // Routing: a cluster by the first key (following MOVED and ASK), a Sentinel client to the master.
    // Replies in node-redis' default types (strings, numbers, arrays), even from a client handed
    // in with `withTypeMapping()`: owner tokens are compared as strings, `SET` answers 'OK'.
    // A Cluster's: node-redis refuses a command for a master whose connection its reconnect
    // strategy gave up "The client is closed", the Cluster still open (see `reconnectGivenUp`).
    const givenUp = (error: unknown): never => {
      const strategy = isClientClosed(error) ? this.reconnectGivenUp() : undefined;
      throw strategy === undefined ? error : new ReconnectGivenUpError(strategy, error);
    };
    this.send =
      kind === 'cluster'
        ? (firstKey, args) => raw.sendCommand(firstKey, false, args, options).catch(givenUp)
        : kind === 'sentinel'
          ? (_firstKey, args) => raw.sendCommand(false, args, options)
          : (_firstKey, args) => raw.sendCommand(args, options);
  }

  bareScript(name: ScriptName): BareScriptCall {
    const { numberOfKeys, lua } = COMMANDS[name];
    const sha = createHash('sha1').update(lua).digest('hex');
    // EVALSHA <sha> <count> <keys, prefixed> <arguments>; a `null` count comes first in params.
    const command = (verb: string, body: string, params: (string | number)[]): Args => {
      const count = numberOfKeys ?? Number(params[0]);
      const from = numberOfKeys === null ? 1 : 0;
      const args: Args = [verb, body, String(count)];
      for (let i = from; i < params.length; i++) args.push(i < from + count ? this.keyPrefix + params[i] : String(params[i]));
      return args;
    };
    return {
      send: (...params) => {
        const args = command('EVALSHA', sha, params);
        return this.send(args[3], args);
      },
      resend: (...params) => {
        const args = command('EVAL', lua, params);
        return this.send(args[3], args);
      },
    };
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], whole = false, mayResend?: () => boolean): Promise<unknown> {
    // Built in a loop, not pushed with a spread: a FencedRedis hset() of many fields (over
    // 100,000 arguments) would overflow the stack.
    const command: Args = whole ? ['EVAL', script.lua, String(keys.length)] : ['EVALSHA', script.sha, String(keys.length)];
    for (const key of keys) command.push(this.keyPrefix + key);
    for (const arg of args) command.push(String(arg));
    const firstKey = command[3];
    // The EVAL's refusal as the EVALSHA's: a server that does not know EVAL echoes its arguments.
    if (whole) return this.send(firstKey, command).catch(throwScriptError);
    return this.send(firstKey, command).catch((error: unknown) => {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT') || mayResend?.() === false) throw scriptError(error);
      const retry = command.slice();
      retry[0] = 'EVAL';
      retry[1] = script.lua;
      return this.send(firstKey, retry).catch(throwScriptError);
    });
  }

  async setIfAbsent(key: string, value: string, ttl: number): Promise<boolean> {
    const full = this.keyPrefix + key;
    return (await this.send(full, ['SET', full, value, 'PX', String(ttl), 'NX'])) === 'OK';
  }

  async exists(key: string): Promise<boolean> {
    const full = this.keyPrefix + key;
    return Number(await this.send(full, ['EXISTS', full])) === 1;
  }

  async deleteField(key: string, field: string): Promise<number> {
    const full = this.keyPrefix + key;
    return Number(await this.send(full, ['HDEL', full, field]));
  }

  /** Commands sent in one tick leave in one write: node-redis pipelines them. */
  async readLock(lock: string, fence: string, waiters: string): Promise<[string | null, number, string | null, number]> {
    const [l, f, w] = [this.keyPrefix + lock, this.keyPrefix + fence, this.keyPrefix + waiters];
    const [owner, pttl, fencing, queued] = await Promise.all([this.send(l, ['GET', l]), this.send(l, ['PTTL', l]), this.send(l, ['GET', f]), this.send(l, ['ZCARD', w])]);
    return [owner === null ? null : String(owner), Number(pttl), fencing === null ? null : String(fencing), Number(queued)];
  }

  /** Sent in one tick, so in one write (see `readLock`). */
  read(commands: readonly ReadCommand[]): Promise<unknown[]> {
    return Promise.all(
      commands.map(async ([verb, key]) => {
        const full = this.keyPrefix + key;
        const reply = await this.send(full, [verb, full]);
        return verb === 'HGETALL' ? flatPairs(reply) : reply;
      }),
    );
  }

  ping(): Promise<unknown> {
    return this.send(undefined, ['PING']);
  }

  closed(): boolean {
    return !this.client.isOpen;
  }

  /**
   * A plain client closed with no `end`: its reconnect strategy gave it up after a drop. A Cluster
   * never ends by itself: node-redis (5, 6) keeps a node connection its reconnect strategy gave up
   * after a drop (closed) as the master's, and refuses every command of that master's slots "The
   * client is closed" until its owner closes the Cluster (a node whose first connect failed is
   * connected again on the next command, and has no client meanwhile). A Sentinel client makes
   * its node connections again on its next command.
   */
  reconnectGivenUp(): string | undefined {
    if (this.kind === 'client') return this.closed() && !this.ended ? 'socket.reconnectStrategy' : undefined;
    if (this.kind !== 'cluster' || this.closed()) return undefined;
    // Masters only: the locks' commands go there (a replica's connection given up costs them nothing).
    const { masters } = this.client as unknown as { masters?: { client?: { isOpen?: unknown } }[] };
    const gaveUp = (node: { client?: { isOpen?: unknown } }) => node.client !== undefined && node.client.isOpen === false;
    return masters?.some(gaveUp) === true ? 'defaults.socket.reconnectStrategy' : undefined;
  }

  async masters(): Promise<RedisNode[]> {
    if (!this.isCluster) return [nodeOf((args) => this.send(undefined, args))];
    const cluster = this.client as unknown as ClusterShape;
    if (cluster.masters.length === 0) await this.ping();
    return cluster.masters.map((master) => {
      const client = cluster.nodeClient(master);
      return nodeOf(async (args) => (await client).sendCommand(args));
    });
  }

  slotOwner(slot: number): string | undefined {
    return (this.client as unknown as ClusterShape).slots?.[slot]?.master?.id;
  }

  /**
   * A `duplicate()` of the client (a Cluster's with `minimizeConnections`: it connects to the
   * nodes a subscription needs, not to every master), connected on first use and closed by
   * `close()`. node-redis routes SSUBSCRIBE to the shard that owns the channel.
   * The duplicate is reconnected by the driver, not by node-redis (see `reconnectDelay`): its
   * attempts wait on a timer `close()` clears. A plain client's duplicate is connected again;
   * node-redis keeps its subscriptions meanwhile and makes them again once it is back. A
   * Cluster's or Sentinel's duplicate, whose node connections node-redis gives up at once, is
   * made again, and the driver subscribes it to the channels still wanted.
   */
  subscriber(onMessage: (channel: string, message: string) => void, onGivenUp?: (cause: unknown) => void): ReleaseSubscriber {
    const listener: Listener = (message, channel) => onMessage(channel, message);
    const subscribe = (connection: PubSubConnection, channel: string, sharded: boolean) => (sharded ? connection.sSubscribe(channel, listener) : connection.subscribe(channel, listener));
    const unsubscribe = (connection: PubSubConnection, channel: string, sharded: boolean) =>
      sharded ? connection.sUnsubscribe(channel, listener) : connection.unsubscribe(channel, listener);
    if (typeof (this.client as { duplicate?: unknown }).duplicate !== 'function') return this.sharedSubscriber(subscribe, unsubscribe);
    const duplicate = (this.client as unknown as { duplicate(overrides?: object): unknown }).duplicate.bind(this.client);
    const plain = this.kind === 'client';
    // A Cluster's or Sentinel's node connections take their options from `defaults` or
    // `nodeClientOptions`; read as the client passes them on (they may be unreadable in a later
    // node-redis: its duplicate then reconnects itself, as before).
    const given = plain ? undefined : optionsOf(this.client);
    const nodeOptionsName = this.kind === 'cluster' ? 'defaults' : 'nodeClientOptions';
    const nodeOptions = given?.[nodeOptionsName] as { socket?: { reconnectStrategy?: unknown } } | undefined;
    const remade = given !== undefined;
    const ownReconnect = plain || remade;
    const socket = plain ? (this.client as { options?: { socket?: { reconnectStrategy?: unknown } } }).options?.socket : nodeOptions?.socket;
    const strategy = socket?.reconnectStrategy;
    /**
     * A new duplicate. A Cluster's or Sentinel's node connections report a drop or a refused
     * connect to `dropped` (their reconnect strategy), and node-redis gives them up.
     */
    const make = (): PubSubConnection => {
      if (plain) return duplicate({ socket: { ...socket, reconnectStrategy: false } }) as PubSubConnection;
      // A Sentinel client's duplicate copies its pools (`masterPoolSize`, `replicaPoolSize`),
      // which would all sit idle: it subscribes, on a pub/sub connection of its own.
      const overrides: Record<string, unknown> = this.kind === 'cluster' ? { minimizeConnections: true } : { masterPoolSize: 1, replicaPoolSize: 0 };
      if (!remade) return duplicate(overrides) as PubSubConnection;
      const made = duplicate({
        ...overrides,
        [nodeOptionsName]: {
          ...nodeOptions,
          socket: {
            ...socket,
            reconnectStrategy: (_retries: number, cause: unknown) => {
              dropped(made, cause);
              return false;
            },
          },
        },
      }) as PubSubConnection;
      return made;
    };
    let connection = make();
    /** Whether `connection` was connected (or tried): a Cluster's or Sentinel's is made again before its next connect. */
    let used = false;
    let connecting: Promise<unknown> | undefined;
    let closed = false;
    /** Connected, as far as the driver knows: set by a connect that succeeded, cleared when node-redis gives the connection up. */
    let up = false;
    /** The next connection attempt, waiting for its timer: `close()` runs it at once, and it gives up. */
    let retry: { timer: NodeJS.Timeout; attempt: () => void } | undefined;
    /**
     * A connect of ours under way that has no socket yet (the name lookup). node-redis' `destroy()`
     * then ends nothing: the connect goes on, subscribes, and leaves the connection open with no
     * way to end it (node-redis 5 refuses a second `destroy()`). So `close()` leaves such a
     * connection to its `connect` event (its socket made, within `connectTimeout`), which
     * destroys it; once there is a socket, `destroy()` ends it and its handshake at once.
     */
    let connectingNow = false;
    // Channels asked for and not given up since: one given up while the connection was still
    // being opened is not subscribed once it is (node-redis' UNSUBSCRIBE of a channel it has no
    // listener on yet sends nothing, and the late SUBSCRIBE would stay for the app's life).
    const wanted = new Set<string>();
    const wantedKey = (channel: string, sharded: boolean): string => (sharded ? `s:${channel}` : `p:${channel}`);
    const fromKey = (key: string): { channel: string; sharded: boolean } => ({ channel: key.slice(2), sharded: key.startsWith('s:') });
    // Channels given up while the connection was down: node-redis rejects such an UNSUBSCRIBE
    // (with the next failed reconnect) but keeps the channel's listener, and subscribes it again
    // once the connection is back, where nobody would give it up any more. Given up again then.
    const givenUpWhileDown = new Map<string, { channel: string; sharded: boolean }>();
    const giveUpAgain = (): void => {
      for (const [key, { channel, sharded }] of givenUpWhileDown) {
        givenUpWhileDown.delete(key);
        if (wanted.has(key)) continue;
        unsubscribe(connection, channel, sharded).catch(() => givenUpWhileDown.set(key, { channel, sharded }));
      }
    };
    /**
     * Channels being subscribed again by the driver: on a Cluster's duplicate after node-redis
     * moved them (see below), on a duplicate made again. One given up meanwhile is given up after.
     */
    const resubscribing = new Map<string, Promise<unknown>>();
    const resubscribe = (key: string): Promise<unknown> => {
      const { channel, sharded } = fromKey(key);
      const again = subscribe(connection, channel, sharded);
      const settled: Promise<unknown> = again
        .catch(() => undefined)
        .finally(() => {
          if (resubscribing.get(key) === settled) resubscribing.delete(key);
        });
      resubscribing.set(key, settled);
      return again;
    };
    /** Set when a node connection of a duplicate being subscribed again dropped: that attempt fails. */
    let droppedWhileOpening = false;
    /** What `make()`'s connections report: a Cluster's or Sentinel's duplicate lost a node connection, or could not make one. */
    function dropped(made: PubSubConnection, cause: unknown): void {
      if (closed || made !== connection) return;
      // While connecting: that attempt fails, and is tried again (see `open`).
      if (!up) {
        droppedWhileOpening = true;
        return;
      }
      up = false;
      const delay = reconnectDelay(strategy, 0, cause);
      // The application's strategy gives up: the next subscribe makes the duplicate again.
      if (delay === false) {
        connecting = undefined;
        onGivenUp?.(cause);
      } else reconnect(delay);
    }
    /** Reconnects after a drop; told when the application's strategy gives up on the way. */
    const reconnect = (delay: number): void => {
      track(open(1, delay)).catch((error: unknown) => {
        if (!closed) onGivenUp?.(error);
      });
    };
    const watch = (made: PubSubConnection): void => {
      made.on('connect', () => {
        connectingNow = false;
        // Once node-redis has begun its handshake on the socket: destroyed before, node-redis 5
        // never settles the connect.
        if (closed && plain) setImmediate(() => destroy(made));
      });
      made.on('error', (error) => {
        // The command connection reports connection trouble. node-redis gave the duplicate up (its
        // strategy is `false`); it keeps the subscriptions, and makes them again once reconnected.
        if (!plain || closed || !up || made.isOpen) return;
        up = false;
        const delay = reconnectDelay(strategy, 0, error);
        if (delay === false) {
          // The application's strategy gives up: the next subscribe opens the connection again.
          connecting = undefined;
          onGivenUp?.(error);
          return;
        }
        reconnect(delay);
      });
      // A Cluster's duplicate: node-redis moves the listeners of a master it stopped using to the
      // slot's new owner, ours included, and destroys the old pub/sub client, which rejects a
      // SUNSUBSCRIBE still waiting there for the dead master ("Disconnects client"): the channel
      // given up during the outage was subscribed on the promoted replica for the application's
      // life. An UNSUBSCRIBE tried again then finds no pub/sub client on the new owner yet and does
      // nothing, before node-redis' SSUBSCRIBE lands. So the driver takes its listener off what
      // node-redis moves (before node-redis' own handler reads it) and subscribes again only the
      // channels still wanted, itself, so that one given up meanwhile is given up after that
      // SSUBSCRIBE, not before.
      if (this.kind === 'cluster' && typeof made.prependListener === 'function') {
        made.prependListener(RESUBSCRIBE_LISTENERS_EVENT, (moved) => {
          for (const [type, sharded] of [['SHARDED', true], ['CHANNELS', false]] as const) {
            const byChannel = moved?.[type];
            if (!(byChannel instanceof Map)) continue;
            for (const [channel, sets] of byChannel) {
              if (!sets?.strings?.delete(listener)) continue;
              if (sets.strings.size === 0 && sets.buffers.size === 0) byChannel.delete(channel);
              const key = wantedKey(channel, sharded);
              if (closed || made !== connection || !wanted.has(key)) continue;
              resubscribe(key).catch(() => undefined);
            }
          }
        });
      }
    };
    watch(connection);
    const destroy = (target = connection): void => {
      if (!target.isOpen) return;
      try {
        Promise.resolve(target.destroy()).catch(() => undefined);
      } catch {
        // already closing
      }
    };
    /**
     * Connects, after `delay` ms when given; on its own reconnect, tries again as node-redis would
     * have. A Cluster's or Sentinel's duplicate is made again and subscribed to every channel
     * still wanted; its first connect is not tried again (the next subscribe does).
     */
    const open = (retries: number, delay?: number): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const attempt = (): void => {
          retry = undefined;
          if (closed) return reject(new Error('the release subscriber is closed'));
          if (remade && used) {
            destroy();
            connection = make();
            watch(connection);
          }
          used = true;
          const made = connection;
          connectingNow = true;
          made
            .connect()
            .then(async () => {
              connectingNow = false;
              // A duplicate made again: subscribed to the channels still wanted before it counts as up.
              if (!remade || retries === 0 || closed) return;
              droppedWhileOpening = false;
              await Promise.all([...wanted].map(resubscribe));
              if (droppedWhileOpening) throw new Error('a connection of the release subscriber dropped while it subscribed again');
            })
            .then(
              () => {
                up = true;
                if (!closed) {
                  giveUpAgain();
                  return resolve();
                }
                destroy(made);
                reject(new Error('the release subscriber is closed'));
              },
              (error: unknown) => {
                connectingNow = false;
                const next = closed || !ownReconnect || (remade && retries === 0) ? false : reconnectDelay(strategy, retries++, error);
                if (next === false) reject(error);
                else retry = { timer: setTimeout(attempt, next), attempt };
              },
            );
        };
        if (delay === undefined) attempt();
        else retry = { timer: setTimeout(attempt, delay), attempt };
      });
    // A connection that failed is tried again by the notifier's next retry, not kept failed.
    function track(opening: Promise<void>): Promise<void> {
      const tracked = opening.catch((error: unknown) => {
        if (connecting === tracked) connecting = undefined;
        throw error;
      });
      connecting = tracked;
      return tracked;
    }
    return {
      subscribe: async (channel, sharded) => {
        connecting ??= track(open(remade && used ? 1 : 0));
        const key = wantedKey(channel, sharded);
        wanted.add(key);
        await connecting;
        if (!wanted.has(key)) return;
        await subscribe(connection, channel, sharded);
      },
      unsubscribe: async (channel, sharded) => {
        const key = wantedKey(channel, sharded);
        wanted.delete(key);
        if (closed) return;
        // Not connected (given up by the application's strategy, say): node-redis may still hold
        // the channel's listener from before, and subscribe it again with the next connection.
        if (plain && (connecting === undefined || !up)) givenUpWhileDown.set(key, { channel, sharded });
        if (connecting === undefined) return;
        // Being subscribed again (a Cluster node that took the channel over, a duplicate made
        // again): given up after. A duplicate being made again does not subscribe it otherwise.
        const moving = resubscribing.get(key);
        if (moving !== undefined) {
          await moving;
          if (closed || wanted.has(key)) return;
        } else if (remade && !up) return;
        try {
          // A Sentinel client's: again if a failover rejected it (see `unsubscribeThroughFailover`).
          await (this.kind === 'sentinel' ? unsubscribeThroughFailover(() => unsubscribe(connection, channel, sharded), () => closed || wanted.has(key)) : unsubscribe(connection, channel, sharded));
        } catch (error) {
          if (plain) givenUpWhileDown.set(key, { channel, sharded });
          throw error;
        }
      },
      close: () => {
        closed = true;
        clearTimeout(retry?.timer);
        retry?.attempt();
        // A Cluster's or Sentinel's duplicate: destroyed now, its node connections stop.
        if (!(plain && connectingNow)) destroy();
      },
    };
  }

  async pingTargets(): Promise<PingTarget[]> {
    if (!this.isCluster) {
      const socket = (this.client as { options?: { socket?: { host?: string; port?: number; path?: string } } }).options?.socket;
      // A Sentinel client's: the master it is connected to (still the frozen one, until a failover moves it).
      const master = this.kind === 'sentinel' ? (this.client as { getMasterNode?: () => { host?: string; port?: number } | undefined }).getMasterNode?.() : undefined;
      const address =
        this.kind === 'sentinel'
          ? master?.host === undefined
            ? undefined
            : `${master.host}:${master.port ?? 6379}`
          : socket?.path ?? (socket?.host === undefined && socket?.port === undefined ? undefined : `${socket?.host ?? 'localhost'}:${socket?.port ?? 6379}`);
      return [{ address, ping: () => writablePing((args) => this.send(undefined, args)) }];
    }
    const cluster = this.client as unknown as ClusterShape;
    if (cluster.masters.length === 0) await this.ping();
    // The masters of node-redis' slot map: one that went down stays there until it is replaced.
    return cluster.masters
      .map((master) => ({ master, address: master.host === undefined ? master.id : `${master.host}:${master.port}` }))
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
      .map(({ master, address }) => ({ address, ping: () => writablePing(async (args) => (await cluster.nodeClient(master)).sendCommand(args)) }));
  }

  /**
   * node-redis 5's Sentinel client cannot be duplicated; it keeps a pub/sub connection of its
   * own, following the master through failovers. Subscribe there, with our own listener, and
   * on close take back every subscription made, leaving the client (the application's) open.
   */
  private sharedSubscriber(
    subscribe: (connection: PubSubConnection, channel: string, sharded: boolean) => Promise<unknown>,
    unsubscribe: (connection: PubSubConnection, channel: string, sharded: boolean) => Promise<unknown>,
  ): ReleaseSubscriber {
    const connection = this.client as unknown as PubSubConnection;
    /** Each subscription made, and whether it is sharded. */
    const channels = new Map<string, boolean>();
    let closed = false;
    return {
      subscribe: async (channel, sharded) => {
        if (closed) throw new Error('the release subscriber is closed');
        channels.set(channel, sharded);
        await subscribe(connection, channel, sharded);
      },
      unsubscribe: async (channel, sharded) => {
        if (!channels.delete(channel)) return;
        // Even after close(): the client stays open, and would keep our listener.
        await unsubscribeThroughFailover(() => unsubscribe(connection, channel, sharded), () => channels.has(channel));
      },
      close: () => {
        closed = true;
        // Again if a failover rejected it, as unsubscribe() does: nothing wants a channel after close().
        for (const [channel, sharded] of channels) unsubscribeThroughFailover(() => unsubscribe(connection, channel, sharded), () => false).catch(() => undefined);
        channels.clear();
      },
    };
  }
}

/**
 * The options a node-redis Cluster or Sentinel client (5, 6) was created with, as its
 * `duplicate()` passes them on (a Sentinel client keeps them private): that `duplicate()`, run
 * on a view of the client whose constructor only takes them. `undefined` when not readable.
 */
function optionsOf(client: object): Record<string, unknown> | undefined {
  const duplicate = (client as { duplicate?: unknown }).duplicate;
  if (typeof duplicate !== 'function') return undefined;
  let options: unknown;
  function Capture(given: unknown): void {
    options = given;
  }
  const view = new Proxy(client, { getPrototypeOf: () => ({ constructor: Capture }) });
  try {
    duplicate.call(view, {});
  } catch {
    return undefined;
  }
  return options !== null && typeof options === 'object' ? (options as Record<string, unknown>) : undefined;
}

/** How many times a channel is given up on a Sentinel client before its UNSUBSCRIBE is left failed. */
const SENTINEL_UNSUBSCRIBE_TRIES = 3;

/**
 * Gives a channel up on a node-redis Sentinel client (`attempt`), again if it failed, unless
 * `stop()` says the channel is wanted again (or the connection closed). node-redis (5.12, 6.3)
 * moves its pub/sub connection to a promoted master by destroying the old one, which rejects an
 * UNSUBSCRIBE still waiting there for the master that died ("Disconnects client"), and keeps the
 * channel's listener, which it subscribes on the new master: nobody would give the channel up
 * any more, and it stayed subscribed for the application's life (on the application's own
 * client for node-redis 5, whose release messages share it, even after `app.close()`). Tried
 * again at once: node-redis has begun the new master's connection by then, and the UNSUBSCRIBE
 * waits for it, after the channel's SUBSCRIBE there.
 */
async function unsubscribeThroughFailover(attempt: () => Promise<unknown>, stop: () => boolean): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (tries >= SENTINEL_UNSUBSCRIBE_TRIES || stop()) throw error;
    }
  }
}

/** node-redis' `ClientClosedError` ("The client is closed"), told by name: `redis` is not imported. */
function isClientClosed(error: unknown): boolean {
  return error instanceof Error && (error.name === 'ClientClosedError' || error.constructor.name === 'ClientClosedError');
}

function nodeOf(send: (args: Args) => Promise<unknown>): RedisNode {
  return {
    info: async (section) => String(await send(['INFO', section])),
    clusterNodes: async () => String(await send(['CLUSTER', 'NODES'])),
    scan: async (cursor, pattern, count) => {
      const [next, keys] = (await send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', String(count)])) as [unknown, unknown[]];
      return [String(next), keys.map(String)];
    },
  };
}
