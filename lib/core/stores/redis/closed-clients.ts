import type { LockLogger } from '../../engine/lock-logger.js';
import { driverFor } from './drivers/driver-for.js';
import type { OpenedConnection } from './redis-connection.js';

/**
 * Says, as the module's shutdown begins, which client handed in its owner closed already. The
 * module gives its locks back in `beforeApplicationShutdown`; a client closed before (in an
 * `onModuleDestroy`, the usual place for a Redis provider's `quit()`) refuses every give-back at
 * once: the locks stay in Redis until their ttl (they were sent again until `shutdownTimeout` ran
 * out before c53ee98), with nothing in the log to say why. `names`: each connection's module
 * option (`redis`, `redis[1]`).
 */
export function warnIfClosedByOwner(connections: readonly OpenedConnection[], names: readonly string[], logger: LockLogger): void {
  connections.forEach(({ client, close }, i) => {
    // Ours are closed by the module itself, after the give-back.
    const driver = driverFor(client);
    if (close !== undefined) return;
    // A Cluster gives up when every master is out of reach at once, by its own option: its nodes
    // are connected with no retryStrategy of theirs. A node-redis client's driver tells its own,
    // and a node-redis Cluster's master connection given up while the Cluster stays open.
    const given = driver.reconnectGivenUp?.();
    if (!driver.closed()) {
      if (given !== undefined) {
        logger.warn(
          `The Redis client handed in (${names[i]}) gave up reconnecting to a master before the lock module shut down (its ${given} gave up after the connection dropped, and it sends nothing to that master any more): the locks it still holds there cannot be given back, and stay in Redis until their ttl runs out. ` +
            `Give it a ${given} that keeps trying while the application runs.`,
        );
      }
      return;
    }
    const strategy = given ?? ((client as { isCluster?: unknown }).isCluster === true ? 'clusterRetryStrategy' : 'retryStrategy');
    logger.warn(
      given !== undefined || gaveUpReconnecting(client)
        ? `The Redis client handed in (${names[i]}) gave up reconnecting before the lock module shut down (its ${strategy} ${given === undefined ? 'returned no delay' : 'gave up'}): the locks it still holds cannot be given back, and stay in Redis until their ttl runs out. ` +
            `Give it a ${strategy} that keeps trying while the application runs.`
        : `The Redis client handed in (${names[i]}) was closed before the lock module shut down: the locks it still holds cannot be given back, and stay in Redis until their ttl runs out. ` +
            'Close a client you hand in in onApplicationShutdown (the module gives its locks back in beforeApplicationShutdown), not in onModuleDestroy.',
    );
  });
}

/**
 * An ioredis (or iovalkey) client that ended because its `retryStrategy` (a Cluster's
 * `clusterRetryStrategy`) gave up, not its owner:
 * both end in status `end` with `manuallyClosing` cleared, but only a give-up follows a retry
 * (`retryAttempts`, reset once a connection is ready; neither is in ioredis' typings).
 */
function gaveUpReconnecting(client: unknown): boolean {
  const { status, retryAttempts } = client as { status?: unknown; retryAttempts?: unknown };
  return status === 'end' && typeof retryAttempts === 'number' && retryAttempts > 0;
}
