import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { systemClock } from '../../lib/core/time/clock.js';
import { redisUrl } from './redis.js';

/** Where a file's script-level specs run: `describe.each(SCRIPT_STORES)('...: %s', (_label, kind) => ...)`. */
export const SCRIPT_STORES = [
  ['one Redis', 'redis'],
  ['a 3-master Redis Cluster', 'cluster'],
  ['in memory', 'memory'],
] as const;

export type ScriptStoreKind = (typeof SCRIPT_STORES)[number][1];

/** The store of one kind, called one script at a time; `client` (Redis) or `data` (memory) to reach under it. */
export interface ScriptStore {
  store: LockScripts | MemoryStore;
  client?: Redis | Cluster;
  data?: MemoryData;
}

/**
 * Opens the lock scripts on the test server or on a 3-master Cluster of their own, or the in-memory
 * store, before the tests of the enclosing `describe`, and closes them after. Read its fields in
 * the tests (they are set in `beforeAll`).
 */
export function useScriptStore(kind: ScriptStoreKind): ScriptStore {
  const opened: ScriptStore = { store: undefined as unknown as LockScripts };
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    if (kind === 'memory') {
      opened.data = new MemoryData();
      opened.store = new MemoryStore(opened.data, systemClock, () => undefined);
      return;
    }
    if (kind === 'cluster') cluster = await startRedisCluster(3);
    opened.client = cluster === undefined ? new Redis(redisUrl()) : new Cluster(cluster.nodes);
    opened.store = new LockScripts(opened.client);
  }, 60_000);
  afterAll(async () => {
    opened.client?.disconnect();
    await cluster?.stop();
  });
  return opened;
}
