/**
 * How long a connection of ours waits at close for Redis to close its side, instead of ioredis'
 * `disconnectTimeout` (2 s by default); the module's own connections wait no longer when ioredis
 * leaves a master during the run either (see `openConnection`). A Redis that answers closes within a millisecond; one
 * that does not (frozen, partitioned) never does, and ioredis' timer kept the process alive
 * for those 2 s after `app.close()`. Nothing is written on our connections after close.
 */
export const CLOSE_WAIT_MS = 100;

/**
 * Readies an ioredis (or iovalkey) connection of ours for `disconnect()`, so that the process
 * can exit at once after it: ioredis (5.9) ends the connection's socket and waits up to its
 * `disconnectTimeout` for the socket to close, with a timer that keeps the process alive.
 * - A connection waiting to reconnect (Redis down or restarting) holds a socket that closed
 *   already, whose close never comes again (redis/ioredis#1247): that socket is forgotten, there
 *   is nothing left to end.
 * - A live socket gets `CLOSE_WAIT_MS` for Redis to close its side (see there).
 * Covers a Cluster's node connections and its subscriber connection, which are Redis clients of
 * their own; a Cluster with no node (every master down) has none.
 */
export function readyForPromptClose(connection: object): void {
  const internals = connection as { nodes?: () => object[]; subscriber?: { subscriber?: object | null } };
  readyRedis(connection);
  const subscriber = internals.subscriber?.subscriber;
  if (subscriber != null) readyRedis(subscriber);
  // A Cluster (a Redis has no `nodes()`): each node is a Redis of its own.
  if (typeof internals.nodes === 'function') for (const node of internals.nodes()) readyRedis(node);
  for (const sharded of shardedSubscribers(connection)) readyRedis(sharded);
}

/** ioredis' (5.9) group of sharded subscribers of a Cluster made with `shardedSubscribers` (not in its typings). */
interface ShardedSubscriberGroup {
  subscriberGroupEmitter?: {
    on?: (event: string, listener: (...args: never[]) => void) => unknown;
    listeners?: (event: string) => ((...args: unknown[]) => void)[];
    removeListener?: (event: string, listener: (...args: unknown[]) => void) => unknown;
  } | null;
  shardedSubscribers?: { shardedSubscribers?: Map<string, { getInstance?: () => object | null }> } | null;
}

/** The connections of a Cluster's sharded subscribers, one per master it subscribes on. */
function shardedSubscribers(connection: object): object[] {
  const group = (connection as ShardedSubscriberGroup).shardedSubscribers?.shardedSubscribers;
  if (!(group instanceof Map)) return [];
  return [...group.values()].flatMap((subscriber) => subscriber.getInstance?.() ?? []);
}

/**
 * Gives the sharded subscribers of a Cluster of ours (made with `shardedSubscribers`) the same
 * short wait at close, as ioredis makes each one. ioredis (5.9) subscribes on a connection of
 * its own per master (`ShardedSubscriber`), made from the master's address alone, with the 2 s
 * `disconnectTimeout`: it stops one at the Cluster's close, and during the run when a slot
 * refresh finds it dropped (its socket closed already, the redis/ioredis#1247 shape), each time
 * with a timer that kept the process alive up to 2 s after `app.close()`.
 */
export function promptShardedSubscribers(connection: object): void {
  const emitter = (connection as ShardedSubscriberGroup).subscriberGroupEmitter;
  if (typeof emitter?.on !== 'function') return;
  emitter.on('+subscriber', () => {
    for (const sharded of shardedSubscribers(connection)) readyRedis(sharded);
  });
  promptSubscriberRetries(connection, emitter);
}

/**
 * Has the retries of a Cluster's sharded subscribers wait on timers of ours, cleared by
 * `disconnectPromptly`. ioredis (5.9), when a sharded subscriber fails to connect (its master
 * down, or its connection stopped by the Cluster's close while it connected), refreshes the slot
 * map after a backoff (200 ms, doubling up to 2 s) on a timer the Cluster's `disconnect()` does
 * not clear: one armed before the close, or by the close itself, kept the process alive up to
 * 2 s after `app.close()`. Its listener is kept, and called when our timer fires, with no delay
 * left; after the close it is not called at all.
 */
function promptSubscriberRetries(connection: object, emitter: NonNullable<ShardedSubscriberGroup['subscriberGroupEmitter']>): void {
  const event = 'subscriberConnectFailed';
  if (typeof emitter.listeners !== 'function' || typeof emitter.removeListener !== 'function') return;
  const retry = emitter.listeners(event);
  if (retry.length === 0) return;
  for (const listener of retry) emitter.removeListener(event, listener);
  const timers = new Set<ReturnType<typeof setTimeout>>();
  onPromptClose(connection, () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  });
  emitter.on?.(event, (failure: { delay?: number }) => {
    if (closedConnections.has(connection)) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closedConnections.has(connection)) for (const listener of retry) listener.call(connection, { ...failure, delay: 0 });
    }, failure?.delay ?? 0);
    timers.add(timer);
  });
}

/** ioredis' connector, the socket it ends on `disconnect()` and how long it waits (not in its typings). */
interface Connector {
  stream?: { destroyed?: boolean } | null;
  disconnectTimeout?: number;
}

function readyRedis(redis: object): void {
  const connector = (redis as { connector?: Connector | null }).connector;
  if (connector == null) return;
  if (connector.stream?.destroyed === true) connector.stream = undefined;
  if (typeof connector.disconnectTimeout !== 'number' || connector.disconnectTimeout > CLOSE_WAIT_MS) connector.disconnectTimeout = CLOSE_WAIT_MS;
}

/** ioredis' Sentinel connector: it asks each sentinel on a client of its own (not in its typings). */
interface SentinelConnector {
  connectToSentinel?: (...args: unknown[]) => object;
}

/**
 * Gives the sentinel clients of a Sentinel connection of ours the same short wait at close.
 * ioredis' SentinelConnector asks each sentinel on a short-lived client of its own, which it
 * disconnects in a `finally`: one whose sentinel refused it (every sentinel down while our
 * connection retries) ends a socket that closed already, with the same 2 s timer that kept the
 * process alive after `app.close()`. Those clients are never ours to reach otherwise. Call it
 * on a connection of ours only: a client handed in stays as its owner made it.
 */
export function promptSentinelClients(connection: object): void {
  const connector = (connection as { connector?: SentinelConnector | null }).connector;
  const connect = connector?.connectToSentinel;
  if (connector == null || typeof connect !== 'function') return;
  connector.connectToSentinel = function (this: unknown, ...args: unknown[]): object {
    return track(connection, connect.apply(this, args) as HelperClient);
  };
}

/** ioredis' Cluster: it refreshes its slot map by asking a node (not in its typings). */
interface SlotRefreshing {
  getInfoFromNode?: (node: { duplicate?: (...args: unknown[]) => unknown } | null | undefined, callback: (...args: unknown[]) => void) => unknown;
}

/**
 * Gives the connections a Cluster of ours opens to refresh its slot map the same short wait at
 * close, and has `disconnectPromptly` end them. ioredis (5.9) refreshes the map (after a node
 * error, when asked, and every `slotsRefreshInterval` if set: off by default, and off on ours) by asking a node on a `duplicate()` of
 * that node's connection, which it disconnects once the node answered or `slotsRefreshTimeout`
 * (1 s, a ref'd timer) passed; the Cluster's `disconnect()` stops neither, and a refresh under
 * way as the application closed, its node frozen or cut off, kept the process alive up to that
 * second. The duplicate is made inside the refresh, so it is caught there, as it is made.
 */
export function promptSlotRefreshes(connection: object): void {
  const cluster = connection as SlotRefreshing;
  const refresh = cluster.getInfoFromNode;
  if (typeof refresh !== 'function') return;
  cluster.getInfoFromNode = function (this: unknown, node, callback) {
    const duplicate = node?.duplicate;
    if (node == null || typeof duplicate !== 'function') return refresh.call(this, node, callback);
    const own = Object.hasOwn(node, 'duplicate');
    node.duplicate = function (this: unknown, ...args: unknown[]): unknown {
      const made = duplicate.apply(this, args) as HelperClient;
      return track(connection, made);
    };
    try {
      return refresh.call(this, node, callback);
    } finally {
      if (own) node.duplicate = duplicate;
      else delete node.duplicate;
    }
  };
}

/** A client ioredis opens on its own for a connection of ours: a sentinel's, a slot refresh's. */
interface HelperClient {
  disconnect(): void;
  once?: (event: string, listener: () => void) => unknown;
}

/** The helper clients of each connection of ours that have not ended yet. */
const openHelpers = new WeakMap<object, Set<HelperClient>>();

/** The connections of ours `disconnectPromptly` closed. */
const closedConnections = new WeakSet<object>();

/** What `disconnectPromptly` also ends for a connection of ours (timers of ours for it). */
const closers = new WeakMap<object, (() => void)[]>();

function onPromptClose(connection: object, close: () => void): void {
  const list = closers.get(connection);
  if (list === undefined) closers.set(connection, [close]);
  else list.push(close);
}

function track(connection: object, helper: HelperClient): HelperClient {
  readyForPromptClose(helper);
  // ioredis disconnects its helper itself once the question it was made for failed, which it
  // does when we ended the helper at the close: its socket closed already, whose close would
  // never come (redis/ioredis#1247), and each disconnect() waits for it on a ref'd timer.
  const disconnect = helper.disconnect;
  helper.disconnect = function (this: unknown, ...args: unknown[]): void {
    readyForPromptClose(helper);
    (disconnect as (...args: unknown[]) => void).apply(this, args);
  };
  if (closedConnections.has(connection)) {
    // Made after the close, by an event that came after it: the master's socket connecting as
    // the connection closed has ioredis' `failoverDetector` (Sentinel options) subscribe to
    // `+switch-master` on the sentinels, on clients of its own, which would stay subscribed
    // (and reconnecting) for good; a Sentinel retry timer due after it asks a sentinel again.
    // Ended as made: what it was made for fails, as on any closed connection.
    helper.disconnect();
    return helper;
  }
  let open = openHelpers.get(connection);
  if (open === undefined) openHelpers.set(connection, (open = new Set()));
  const helpers = open;
  helpers.add(helper);
  helper.once?.('end', () => helpers.delete(helper));
  return helper;
}

/**
 * Disconnects a connection of ours promptly (see `readyForPromptClose`), then the helper
 * clients ioredis still has open for it (see `promptSentinelClients`, `promptSlotRefreshes`):
 * ioredis' SentinelConnector waits for a sentinel's answer without a timeout and disconnects its
 * client only once the answer came, and `disconnect()` stops neither. With the master down and
 * the sentinel asked frozen, those sockets kept the process alive for as long as the sentinel
 * stayed frozen. Ended after the connection, so that its connector, no longer connecting, does
 * not go on to ask the next sentinel (nor a Cluster's refresh the next node).
 */
export function disconnectPromptly(connection: { disconnect(): void }): void {
  readyForPromptClose(connection);
  closedConnections.add(connection);
  for (const close of closers.get(connection) ?? []) close();
  connection.disconnect();
  const open = openHelpers.get(connection);
  if (open === undefined) return;
  for (const helper of open) helper.disconnect();
  open.clear();
}
