import type { LockLogger } from '../../engine/lock-logger.js';
import type { RedisClient } from './drivers/redis-client.js';
import { mastersInfo } from './masters-info.js';

/** The master a server replicates (`host:port`, or `a master` when it does not say), from its `INFO replication`; undefined for a master. */
export function replicaOf(replication: string): string | undefined {
  if (!/^role:slave\b/m.test(replication)) return undefined;
  const of = [/^master_host:(\S+)/m.exec(replication)?.[1], /^master_port:(\d+)/m.exec(replication)?.[1]].filter(Boolean).join(':');
  return of || 'a master';
}

/**
 * Reports, as an error, a `redis` option that reaches a replica (a URL copied from the wrong line,
 * a replica behind a load balancer): it refuses every write with READONLY, which the engine
 * takes for a failover under way and retries, so each acquisition waited out its whole
 * `waitTimeout` before failing, and nothing said why at startup. Retrying stays right in a
 * failover (the connection is moved to the new master); this names the cause up front. Reads
 * `INFO replication`, which the least-privilege user may run, in the background: a server that
 * does not answer is left out, and the check never delays or fails startup. A Cluster's or a
 * Sentinel's client reaches masters by itself.
 */
export function reportReplica(client: RedisClient, logger: LockLogger): void {
  mastersInfo(client, 'replication')
    .then((infos) => {
      const of = infos.map(replicaOf).find((found) => found !== undefined);
      if (of === undefined) return;
      logger.error(
        `The redis option reaches a replica (of ${of}), which refuses every write (READONLY): every lock call waits out its waitTimeout and fails, as during a failover. ` +
          "Give the module the master's address (or the Sentinels that know it).",
      );
    })
    .catch(() => undefined);
}
