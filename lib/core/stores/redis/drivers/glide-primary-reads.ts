import { createHash } from 'node:crypto';
import type { LuaScript } from './redis-driver.js';

const script = (lua: string): LuaScript => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

/**
 * GLIDE's standalone client (`GlideClient`) created with a `readFrom` other than `'primary'`
 * sends every read-only command to a replica, and, unlike the Cluster client, takes no route
 * per command. A replica may not have applied the last writes yet: `inspect()` and `isLocked()`
 * answered a lock this process had just taken as free. A script is no read-only command to
 * GLIDE (it may write): it goes to the primary, and so runs the read there.
 */
export const PRIMARY_READ = script('return redis.call(ARGV[1], KEYS[1])');
/** The lock board's SCAN, on the primary likewise (SCAN may run in a script since Redis 5). */
export const PRIMARY_SCAN = script("return redis.call('SCAN', ARGV[1], 'MATCH', ARGV[2], 'COUNT', ARGV[3])");

/** Whether a standalone GLIDE client with this configuration sends reads to replicas. */
export function readsFromReplicas(config: Readonly<Record<string, unknown>>): boolean {
  return config.readFrom !== undefined && config.readFrom !== 'primary';
}
