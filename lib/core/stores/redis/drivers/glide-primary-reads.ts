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
/**
 * A command of no key on the primary likewise: the lock board's SCAN, and the startup checks'
 * INFO, which GLIDE counts as reads too (it read the replica's role, and logged the client as
 * reaching a replica).
 */
export const PRIMARY_COMMAND = script('return redis.call(unpack(ARGV))');

/** Whether a standalone GLIDE client with this configuration sends reads to replicas. */
export function readsFromReplicas(config: Readonly<Record<string, unknown>>): boolean {
  return config.readFrom !== undefined && config.readFrom !== 'primary';
}
