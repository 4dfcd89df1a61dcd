import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';

/** The process id of the Redis server `node` is connected to (to freeze or kill it). */
export const pidOf = async (node: Redis): Promise<number> => Number(/process_id:(\d+)/.exec(await node.info('server'))![1]);

/**
 * A Sentinel deployment (master, replica, 3 sentinels) for the tests of a file, with a plain
 * connection to the master and one to the replica, and the replica's process id: read them from
 * the returned object inside the tests. Stopped after them, once the file's own teardown ran.
 */
export function useSentinelPair(): { readonly deployment: SentinelDeployment; readonly master: Redis; readonly replica: Redis; readonly replicaPid: number } {
  const started = {} as { deployment: SentinelDeployment; master: Redis; replica: Redis; replicaPid: number };
  beforeAll(async () => {
    started.deployment = await startSentinelDeployment();
    started.master = new Redis(started.deployment.masterPort, '127.0.0.1');
    started.master.on('error', () => undefined); // a test may kill it
    started.replica = new Redis(started.deployment.replicaPort, '127.0.0.1');
    started.replicaPid = await pidOf(started.replica);
  }, 60_000);
  afterAll(async () => {
    started.master?.disconnect();
    started.replica?.disconnect();
    await started.deployment?.stop();
  });
  return started;
}
