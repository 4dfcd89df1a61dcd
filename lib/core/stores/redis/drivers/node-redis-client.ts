/**
 * A node-redis client (the `redis` package, v5 or v6): `createClient()`, `createCluster()` or
 * `createSentinel()`, connected. Described by shape only, so that neither the types nor the
 * runtime of this library need `redis` installed. The module never closes it.
 *
 * @example
 * ```ts
 * import { createCluster } from 'redis';
 *
 * const redis = await createCluster({ rootNodes: [{ url: 'redis://10.0.0.1:7000' }] }).connect();
 * RedisLockModule.forRoot({ redis });
 * ```
 */
export interface NodeRedisClient {
  sendCommand(...args: never[]): Promise<unknown>;
  connect(): Promise<unknown>;
  readonly isOpen: boolean;
}

/** Which of node-redis' clients it is: they route commands differently. */
export type NodeRedisKind = 'client' | 'cluster' | 'sentinel';

/**
 * Tells a node-redis client from an ioredis one (which has `defineCommand` and no `isOpen`) by
 * duck typing, without importing `redis`.
 */
export function nodeRedisKind(client: unknown): NodeRedisKind | undefined {
  const candidate = client as Record<string, unknown> | null;
  if (candidate === null || typeof candidate !== 'object') return undefined;
  if (typeof candidate.defineCommand === 'function') return undefined;
  // node-redis 5's Sentinel client has no `duplicate()`: not required.
  if (typeof candidate.sendCommand !== 'function' || typeof candidate.connect !== 'function' || !('isOpen' in candidate)) return undefined;
  if (typeof candidate.nodeClient === 'function') return 'cluster';
  if (typeof candidate.getMasterNode === 'function') return 'sentinel';
  return 'client';
}

export function isNodeRedisClient(client: unknown): client is NodeRedisClient {
  return nodeRedisKind(client) !== undefined;
}

/**
 * Whether a node-redis client speaks RESP2, where Redis refuses a subscribed connection every
 * command but (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT and RESET (RESP3 runs any command
 * there): its `RESP` option, else its major's default, RESP3 for node-redis 6 (told by the
 * `keyPrefix` it added, read as `_keyPrefix`), RESP2 for node-redis 5.
 */
export function speaksResp2(client: object): boolean {
  const given = (client as { options?: { RESP?: unknown } }).options?.RESP;
  if (given !== undefined) return given === 2;
  return !('_keyPrefix' in client);
}
