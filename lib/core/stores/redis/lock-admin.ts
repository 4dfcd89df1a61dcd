import type { LockInspection } from '../../../interfaces/lock-inspection.interface.js';
import type { LockManager } from '../../engine/lock-manager.js';
import { driverFor } from './drivers/driver-for.js';
import { clientKeyPrefix } from './lock-scripts.js';
import type { RedisClient } from './drivers/redis-client.js';
import { lockRedisKeys, checkLockKey } from '../../keys/lock-key.js';
import { parseHolder } from '../../engine/holder.js';
import { RedisLockError } from '../../../errors/redis-lock.error.js';
import { settleWithin, TIMED_OUT } from '../../time/settle-within.js';

/** One page of locks found under the prefix. */
export interface LockPage {
  /** Pass it back for the next page; `'0'` when the scan is complete. */
  cursor: string;
  locks: LockInspection[];
}

/**
 * Lists held locks under the module's prefix with SCAN (never KEYS: it would block Redis on a
 * large keyspace), a page at a time, and inspects each. SCAN may return a key twice or a page
 * with fewer entries than asked; it never misses a lock held for the whole scan. On a Redis
 * Cluster the cursor walks the masters one after the other; in quorum mode the keys of the
 * first node that answers are listed (each still inspected on the majority).
 */
export async function listLocks(manager: LockManager, cursor: string, count: number): Promise<LockPage> {
  const { clients } = manager;
  if (clients.length === 0 && manager.store.scanLocks !== undefined) {
    // The in-memory store: no Redis to SCAN, the store lists its own keys.
    return inspectAll(manager, await manager.store.scanLocks(manager.keyPrefix, plainCursor(cursor), count), manager.keyPrefix);
  }
  if (clients.length === 1) return inspectAll(manager, await scanPage(clients[0]!, cursor, lockPattern(clients[0]!, manager), count), clientKeyPrefix(clients[0]!) + manager.keyPrefix);
  // Quorum: the first node that answers, `<node index>-<cursor>` (a cursor is only valid on its node).
  const match = /^(\d+)-(\d+)$/.exec(cursor);
  let node = match ? Number(match[1]) : 0;
  let nodeCursor = match ? match[2]! : '0';
  for (; ; node++, nodeCursor = '0') {
    const client = clients[node];
    if (client === undefined) throw new RedisLockError(`No Redis node answered the scan of the locks (${clients.length} nodes).`);
    const page = await settleWithin(scanPage(client, nodeCursor, lockPattern(client, manager), count), QUORUM_SCAN_TIMEOUT_MS).catch((): typeof TIMED_OUT => TIMED_OUT);
    if (page === TIMED_OUT) continue;
    return inspectAll(manager, { next: page.next === '0' ? '0' : `${node}-${page.next}`, keys: page.keys }, clientKeyPrefix(client) + manager.keyPrefix);
  }
}

/** A quorum node that does not answer a scan within this is skipped for the next one. */
const QUORUM_SCAN_TIMEOUT_MS = 1_000;

/** Lock keys are `<prefix>{<key>}`; their siblings end in `:fence`, `:queue`..., not in `}`. */
function lockPattern(client: RedisClient, manager: LockManager): string {
  return `${escapeGlob(clientKeyPrefix(client) + manager.keyPrefix)}{*}`;
}

/** `fullPrefix`: what stands before `{<key>}` in the store's key names (client prefix and module prefix). */
async function inspectAll(manager: LockManager, { next, keys }: { next: string; keys: string[] }, fullPrefix: string): Promise<LockPage> {
  const userKeys = [...new Set(keys.map((key) => userKey(key, fullPrefix)))];
  const locks = await Promise.all(userKeys.map((key) => manager.inspect(key)));
  return { cursor: next, locks: locks.filter((lock) => lock.held) };
}

/**
 * Deletes a lock whoever holds it, through the owner-checked release script with the owner
 * token read just before (so a lock taken again meanwhile by someone else is left alone), and
 * hands it to the next waiter as a normal release does. Returns whether it was released.
 */
export async function forceRelease(manager: LockManager, key: string): Promise<boolean> {
  const names = lockRedisKeys(manager.keyPrefix, checkLockKey(key));
  const snapshot = await manager.store.inspect(names);
  // Held by readers ('~r', see rwlock/): each reader renews its own key and would never learn
  // of a forced release, so a writer could run beside them. Readers are left alone.
  if (snapshot.owner === null || snapshot.owner === '~r') return false;
  const { released } = await manager.releaseInRedis(names, snapshot.owner);
  if (released && manager.listening) {
    const holder = parseHolder(snapshot.owner);
    manager.emit({
      type: 'force-released',
      key,
      ...(snapshot.fencingToken === null ? {} : { fencingToken: snapshot.fencingToken }),
      ...(holder ? { holder: `${holder.label ?? '?'} (${holder.instance ?? holder.host}, pid ${holder.pid})` } : {}),
      at: Date.now(),
    });
  }
  return released;
}

async function scanPage(client: RedisClient, cursor: string, pattern: string, count: number): Promise<{ next: string; keys: string[] }> {
  const driver = driverFor(client);
  if (!driver.isCluster) {
    const [next, keys] = await (await driver.masters())[0]!.scan(plainCursor(cursor), pattern, count);
    return { next, keys };
  }
  // `<master index>-<cursor>`: one node after the other.
  const masters = await driver.masters();
  const match = /^(\d+)-(\d+)$/.exec(cursor);
  let node = match ? Number(match[1]) : 0;
  let nodeCursor = match ? match[2]! : '0';
  if (node >= masters.length) return { next: '0', keys: [] };
  const [next, keys] = await masters[node]!.scan(nodeCursor, pattern, count);
  if (next !== '0') return { next: `${node}-${next}`, keys };
  node++;
  nodeCursor = '0';
  return { next: node < masters.length ? `${node}-${nodeCursor}` : '0', keys };
}

function plainCursor(cursor: string): string {
  return /^\d+$/.test(cursor) ? cursor : '0';
}

/** The caller's key back from `<client prefix><prefix>{<key>}` (see `lockRedisKeys`). */
function userKey(redisKey: string, fullPrefix: string): string {
  const tagged = redisKey.slice(fullPrefix.length + 1, -1);
  return tagged.startsWith('\\') ? tagged.slice(1) : tagged;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
