import { warnIfEvicting } from './eviction-check.js';
import type { LockBackend } from '../../engine/lock-backend.js';
import type { LockLogger } from '../../engine/lock-logger.js';
import type { ResolvedModuleOptions } from '../../options/lock-options.js';
import { clientKeyPrefix, LockScripts } from './lock-scripts.js';
import { claimLockPrefix } from '../../keys/lock-prefixes.js';
import { QuorumStore } from '../quorum/quorum-store.js';
import { reportSharedServers } from '../quorum/quorum-servers.js';
import { reportReplica } from './replica-check.js';
import { openConnection, type OpenedConnection } from './redis-connection.js';
import { ReleaseNotifier } from './release-notifier.js';
import { SlotRefresh } from './slot-refresh.js';
import { warnIfClosedByOwner } from './closed-clients.js';
import { driverFor } from './drivers/driver-for.js';
import type { RedisClient } from './drivers/redis-client.js';

/**
 * The backend for the module's `redis` option: one connection (a server, a Sentinel-managed
 * master or a Cluster), with release messages; or several independent masters in quorum mode,
 * where waiters poll. Connections made from URLs or options are ours to close; clients handed in
 * are not.
 */
export function redisBackend(options: ResolvedModuleOptions, logger: LockLogger): LockBackend {
  const connections: OpenedConnection[] = [];
  try {
    if (!Array.isArray(options.redis)) connections.push(openConnection(options.redis, logger));
    else options.redis.forEach((redis, i) => connections.push(openConnection(redis, logger, `redis[${i}]`)));
  } catch (error) {
    // A refused node (a node-redis client not connected) must not leave the others open.
    for (const { close } of connections) close?.();
    throw error;
  }
  const clients = connections.map(({ client }) => client);
  const names = connections.length === 1 ? ['redis'] : connections.map((_, i) => `redis[${i}]`);
  // The shutdown begins: a client handed in that its owner closed already is named (see there).
  const closedByOwner = (): void => warnIfClosedByOwner(connections, names, logger);
  // FencedRedis refuses a client whose prefix is where these locks keep their keys (see lock-prefixes.ts).
  const claims = clients.map((client) => claimLockPrefix(clientKeyPrefix(client) + options.keyPrefix));
  const closeConnections = (): void => {
    for (const release of claims) release();
    for (const { close } of connections) close?.();
  };
  // The application starts: our connections connect (made unconnected, see `openConnection`), and
  // the startup checks ask Redis (they would connect them too).
  const startConnections = (): void => {
    for (const { connect } of connections) connect?.();
    warnIfEvicting(clients, logger);
    if (connections.length > 1) reportSharedServers(clients, logger);
    else reportReplica(clients[0]!, logger);
  };
  // Whatever fails from here on fails startup: the connections opened for it must not outlive it.
  try {
    if (connections.length > 1) {
      const nodes = clients.map((client) => new LockScripts(client, options.fenceRetention));
      const store = new QuorumStore(nodes);
      // Each master's store hears of the close too: it drops the EVAL a NOSCRIPT answered after it calls for.
      const close = (): void => {
        for (const node of nodes) node.close();
        closeConnections();
      };
      const shuttingDown = (): void => {
        closedByOwner();
        store.shuttingDown();
        for (const node of nodes) node.shuttingDown();
      };
      return { store, clients, start: startConnections, shuttingDown, owedAtShutdown: () => store.owedAtShutdown(), close };
    }
    return singleBackend(clients[0]!, options, logger, startConnections, closeConnections, closedByOwner);
  } catch (error) {
    closeConnections();
    throw error;
  }
}

/** One connection (a server, a Sentinel-managed master or a Cluster), with release messages. */
function singleBackend(
  client: RedisClient,
  options: ResolvedModuleOptions,
  logger: LockLogger,
  startConnections: () => void,
  closeConnections: () => void,
  closedByOwner: () => void,
): LockBackend {
  const store = new LockScripts(client, options.fenceRetention, options.waitForReplicas);
  const notifier = new ReleaseNotifier(client, logger, store.isCluster);
  const driver = driverFor(client);
  const slots = store.isCluster && driver.refreshSlots !== undefined ? new SlotRefresh(() => driver.refreshSlots!(), logger) : undefined;
  return {
    store,
    notifier,
    clients: [client],
    unanswered: slots === undefined ? undefined : () => slots.request(),
    start: () => {
      startConnections();
      store.start();
    },
    shuttingDown: () => {
      closedByOwner();
      store.shuttingDown();
    },
    // Each one closes even if one before it throws: a connection left open keeps the process alive.
    close: () => {
      slots?.close();
      try {
        notifier.close();
      } finally {
        try {
          store.close();
        } finally {
          closeConnections();
        }
      }
    },
  };
}
