import type { LockLogger } from '../../engine/lock-logger.js';
import { driverFor } from '../redis/drivers/driver-for.js';
import type { RedisClient } from '../redis/drivers/redis-client.js';
import { replicaOf } from '../redis/replica-check.js';

/**
 * Reports quorum entries that reach the same Redis server: each entry is one vote, so one server
 * listed twice (two clients, or two spellings of its address the options could not tell apart)
 * lets one failure, or one stale grant, count for two. Compares the servers' `run_id` (`INFO
 * server`, which the least-privilege user may run) in the background: an entry that does not
 * answer (a node down at startup) is left out, and the check never delays or fails startup.
 * Also reports an entry that reaches a replica (`INFO replication`): it refuses every write, so
 * its part of each lock fails and the others run without a spare, while its reads repeat its
 * master's copies.
 */
export function reportSharedServers(clients: readonly RedisClient[], logger: LockLogger): void {
  // Each entry is compared as it answers: one that never does (a master frozen at startup) must
  // not hold up the others' check.
  const entryOf = new Map<string, number>();
  clients.forEach((client, i) => {
    driverFor(client)
      .masters()
      .then((masters) => Promise.all(masters.map((master) => Promise.all([master.info('server'), master.info('replication').catch(() => '')]))))
      .then((nodes) => {
        const infos = nodes.map(([server]) => server);
        for (const [, replication] of nodes) {
          const of = replicaOf(replication);
          if (of === undefined) continue;
          logger.error(
            `Quorum mode: redis[${i}] is a replica (of ${of}), which refuses every write: each lock's part there fails, as on a master down, so one failure ` +
              `less is survived, and its reads repeat its master's copies. List independent masters, not replicas.`,
          );
        }
        for (const id of new Set(infos.map((info) => /^run_id:(\w+)/m.exec(info)?.[1]).filter((found): found is string => found !== undefined))) {
          const other = entryOf.get(id);
          if (other === undefined) {
            entryOf.set(id, i);
            continue;
          }
          logger.error(
            `Quorum mode: redis[${Math.min(other, i)}] and redis[${Math.max(other, i)}] are the same Redis server (run_id ${id}), which counts as two of ${clients.length} votes: ` +
              'one failure of it loses both, and a lock it grants stands for a majority it is not. List each independent master once.',
          );
        }
      })
      .catch(() => undefined);
  });
}
