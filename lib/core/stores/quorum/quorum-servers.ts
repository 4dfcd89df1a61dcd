import type { LockLogger } from '../../engine/lock-logger.js';
import { driverFor } from '../redis/drivers/driver-for.js';
import type { RedisClient } from '../redis/drivers/redis-client.js';

/**
 * Reports quorum entries that reach the same Redis server: each entry is one vote, so one server
 * listed twice (two clients, or two spellings of its address the options could not tell apart)
 * lets one failure, or one stale grant, count for two. Compares the servers' `run_id` (`INFO
 * server`, which the least-privilege user may run) in the background: an entry that does not
 * answer (a node down at startup) is left out, and the check never delays or fails startup.
 */
export function reportSharedServers(clients: readonly RedisClient[], logger: LockLogger): void {
  void Promise.all(
    clients.map((client) =>
      driverFor(client)
        .masters()
        .then((masters) => Promise.all(masters.map((master) => master.info('server'))))
        .then((infos) => infos.map((info) => /^run_id:(\w+)/m.exec(info)?.[1]).filter((id): id is string => id !== undefined))
        .catch(() => [] as string[]),
    ),
  ).then((runIds) => {
    const entryOf = new Map<string, number>();
    runIds.forEach((ids, i) => {
      for (const id of new Set(ids)) {
        const first = entryOf.get(id);
        if (first === undefined) {
          entryOf.set(id, i);
          continue;
        }
        logger.error(
          `Quorum mode: redis[${first}] and redis[${i}] are the same Redis server (run_id ${id}), which counts as two of ${clients.length} votes: ` +
            'one failure of it loses both, and a lock it grants stands for a majority it is not. List each independent master once.',
        );
      }
    });
  });
}
