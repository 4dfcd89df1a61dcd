/**
 * Makes an ioredis (or iovalkey) connection of ours ready for `disconnect()` without leaving a
 * timer behind. ioredis (5.9) ends the connection's socket and waits up to its
 * `disconnectTimeout` (2 s, a timer that keeps the process alive) for the socket to close. A
 * connection waiting to reconnect (Redis down or restarting) still holds the socket that closed
 * already, whose close never comes again: a process that had closed its application lived on
 * for those 2 s (redis/ioredis#1247). So a socket that closed is forgotten first: there is
 * nothing left to end. Covers a Cluster's node connections and its subscriber connection.
 */
export function forgetClosedSockets(connection: object): void {
  const internals = connection as { nodes?: () => object[]; subscriber?: { subscriber?: object } };
  forgetClosedSocket(connection);
  if (internals.subscriber?.subscriber !== undefined) forgetClosedSocket(internals.subscriber.subscriber);
  // A Cluster (a Redis has no `nodes()`): each node is a Redis of its own.
  if (typeof internals.nodes === 'function') for (const node of internals.nodes()) forgetClosedSocket(node);
}

/** ioredis' connector and the socket it ends on `disconnect()` (not in its typings). */
interface Connector {
  stream?: { destroyed?: boolean };
}

function forgetClosedSocket(redis: object): void {
  const connector = (redis as { connector?: Connector }).connector;
  if (connector?.stream?.destroyed === true) connector.stream = undefined;
}
