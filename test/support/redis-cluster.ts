import { Cluster } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';

/**
 * A 3-master Redis Cluster of the test file's own, started before its tests (slots assigned,
 * every master answering) and stopped after them, with `admin`, an ioredis Cluster client on
 * it for looking from the outside (both read once `beforeAll` ran). Register it before the file's own `afterAll` hooks: those run
 * first (last registered, first run), while the cluster still answers.
 */
export function useRedisCluster(): { readonly cluster: RedisCluster; readonly admin: Cluster } {
  let cluster: RedisCluster | undefined;
  let admin: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    admin = new Cluster(cluster.nodes);
    await admin.ping();
  }, 60_000);
  afterAll(async () => {
    admin?.disconnect();
    await cluster?.stop();
  });
  return {
    get cluster() {
      return cluster!;
    },
    get admin() {
      return admin!;
    },
  };
}
