/**
 * How long a connection of ours waits at close for Redis to close its side, instead of ioredis'
 * `disconnectTimeout` (2 s by default). A Redis that answers closes within a millisecond; one
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
    const sentinel = connect.apply(this, args);
    readyForPromptClose(sentinel);
    return sentinel;
  };
}
