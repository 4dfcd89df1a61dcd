import type { LockInspection } from '../../../interfaces/lock-inspection.interface.js';
import type { LockManager } from '../../engine/lock-manager.js';
import { driverFor } from './drivers/driver-for.js';
import { clientKeyPrefix } from './lock-scripts.js';
import type { RedisClient } from './drivers/redis-client.js';
import type { RedisNode } from './drivers/redis-driver.js';
import { lockRedisKeys, checkLockKey } from '../../keys/lock-key.js';
import { parseHolder } from '../../engine/holder.js';
import { RedisLockError } from '../../../errors/redis-lock.error.js';
import { settleWithin, TIMED_OUT } from '../../time/settle-within.js';

/** One page of locks found under the prefix. */
export interface LockPage {
  /** Pass it back for the next page; `'0'` when the scan is complete. */
  cursor: string;
  /**
   * Whether the scan went through every key: only then does an empty page mean that no lock
   * is held. A page may come back with fewer locks than asked, even none, before the end.
   */
  complete: boolean;
  /** Locks held, and semaphores in use (`semaphore` set), in key order. */
  locks: LockInspection[];
}

/**
 * Keys a page may look at in Redis (the sum of the SCAN COUNTs sent for it), so that a page
 * on a large keyspace with few locks costs a bounded amount of work: about 40 SCAN calls.
 */
export const SCAN_WORK_PER_PAGE = 40_000;
/** COUNT of one SCAN call: starts at the page size, doubles up to this. */
const MAX_SCAN_COUNT = 1_000;
/** The largest cursor Redis hands out (an unsigned 64-bit integer). */
const MAX_SCAN_CURSOR = 18_446_744_073_709_551_615n;

/**
 * Lists held locks and semaphores in use under the module's prefix with SCAN (never KEYS: it
 * would block Redis on a large keyspace), and inspects each. One page scans on until it has
 * `count` candidates, the scan is complete, or `SCAN_WORK_PER_PAGE` keys were looked at, so
 * that keys of other kinds (a cache on the same Redis) do not make pages come back empty. SCAN
 * may return a key twice; it never misses a lock held for the whole scan. On a Redis Cluster the
 * cursor walks the masters one after the other; in quorum mode it walks the nodes one after the
 * other too (a lock a majority holds may be missing on any one of them: restarted empty), skips
 * a node that does not answer, and lists a key found on a later node only if no earlier node
 * that answers holds it (each key is inspected on the majority). The cursor must be `'0'` or one
 * this function returned (see `cursorProblem`).
 */
export async function listLocks(manager: LockManager, cursor: string, count: number, work = SCAN_WORK_PER_PAGE): Promise<LockPage> {
  const { clients } = manager;
  if (clients.length === 0 && manager.store.scanLocks !== undefined) {
    // The in-memory store: no Redis to SCAN, the store lists its own keys.
    const scanLocks = manager.store.scanLocks.bind(manager.store);
    const found = await scanUntilFull((from, size) => scanLocks(manager.keyPrefix, from, size), plainCursor(cursor), count, work);
    return inspectAll(manager, found!, manager.keyPrefix);
  }
  if (clients.length === 1) {
    const client = clients[0]!;
    const pattern = lockPattern(client, manager);
    const found = await scanUntilFull((from, size) => scanPage(client, from, pattern, size), cursor, count, work);
    return inspectAll(manager, found!, clientKeyPrefix(client) + manager.keyPrefix);
  }
  // Quorum: every node in turn, `<node index>-<cursor>` (a cursor is only valid on its node),
  // then `s<mask>` once a node was skipped (bit i: node i did not answer its turn).
  const match = /^(\d+)-(\d+)(?:s(\d+))?$/.exec(cursor);
  let node = match ? Number(match[1]) : 0;
  let nodeCursor = match ? match[2]! : '0';
  let skipped = match?.[3] === undefined ? 0 : Number(match[3]);
  const cursorOf = (at: number, from: string): string => `${at}-${from}${skipped === 0 ? '' : `s${skipped}`}`;
  // A lock a majority holds is on one of any `needed` nodes: the walk is complete once that
  // many were scanned to their end; with fewer, a lock may be on none of them.
  const needed = clients.length - (Math.floor(clients.length / 2) + 1) + 1;
  const tooFew = (): RedisLockError =>
    new RedisLockError(`Too few Redis nodes answered the scan of the locks to see every lock a majority holds (${clients.length} nodes, ${needed} needed, ${clients.length - bitCount(skipped)} answered).`);
  for (; ; node++, nodeCursor = '0') {
    const client = clients[node];
    if (client === undefined) {
      if (clients.length - bitCount(skipped) >= needed) return { cursor: '0', complete: true, locks: [] };
      throw tooFew();
    }
    const pattern = lockPattern(client, manager);
    const found = await scanUntilFull(
      async (from, size) => {
        const page = await settleWithin(scanPage(client, from, pattern, size), QUORUM_SCAN_TIMEOUT_MS).catch((): typeof TIMED_OUT => TIMED_OUT);
        return page === TIMED_OUT ? undefined : page;
      },
      nodeCursor,
      count,
      work,
    );
    if (found === undefined) {
      skipped |= 1 << node;
      continue;
    }
    let next: string;
    if (found.next !== '0') next = cursorOf(node, found.next);
    else if (node < clients.length - 1) next = cursorOf(node + 1, '0');
    else if (clients.length - bitCount(skipped) >= needed) next = '0';
    else throw tooFew();
    const prefix = clientKeyPrefix(client) + manager.keyPrefix;
    // Only the nodes scanned in their turn listed what they hold.
    const scanned = clients.slice(0, node).filter((_, i) => (skipped & (1 << i)) === 0);
    const keys = scanned.length === 0 ? found.keys : await notOnEarlierNodes(manager, scanned, found.keys, prefix);
    return inspectAll(manager, { next, keys }, prefix);
  }
}

function bitCount(mask: number): number {
  let count = 0;
  for (let rest = mask; rest > 0; rest >>>= 1) count += rest & 1;
  return count;
}

/**
 * The keys of `found` (scanned on a later quorum node, named with its `prefix`) that none of the
 * `earlier` nodes holds: a key one of them holds was listed in its turn (held for the whole walk,
 * it was there). A node that does not answer within the scan timeout holds nothing here.
 */
async function notOnEarlierNodes(manager: LockManager, earlier: readonly RedisClient[], found: string[], prefix: string): Promise<string[]> {
  const held = await Promise.all(
    found.map(async (redisKey) => {
      const key = userKey(redisKey, prefix);
      if (!isLockKey(key)) return true;
      const lock = lockRedisKeys(manager.keyPrefix, key).lock;
      const answers = await Promise.all(
        earlier.map((client) => settleWithin(driverFor(client).exists(lock), QUORUM_SCAN_TIMEOUT_MS).catch(() => false)),
      );
      return answers.some((answer) => answer === true);
    }),
  );
  return found.filter((_, index) => !held[index]);
}

/**
 * Why `cursor` is not one `listLocks` hands out on this deployment, or `undefined` when it is:
 * `'0'`, else an unsigned 64-bit SCAN cursor, prefixed with `<node index>-` on a Cluster (the
 * master) and in quorum mode (the node), with the index in range.
 */
export async function cursorProblem(manager: LockManager, cursor: string): Promise<string | undefined> {
  const shown = JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 40)}…` : cursor);
  const match = /^(?:(\d{1,10})-)?(\d{1,20})(?:s(\d{1,10}))?$/.exec(cursor);
  if (match === null || BigInt(match[2]!) > MAX_SCAN_CURSOR) {
    return `must be "0" or a cursor this board handed out (digits, "<node>-<digits>" on a Cluster or in quorum mode), got ${shown}.`;
  }
  if (cursor === '0') return undefined;
  // The nodes a quorum walk skipped (see listLocks): quorum mode only, after a node index.
  if (match[3] !== undefined && (match[1] === undefined || manager.clients.length < 2)) return `is not a cursor this board hands out on this deployment, got ${shown}.`;
  const nodes = await nodeCount(manager);
  if (match[1] === undefined) {
    return nodes === undefined ? undefined : `must be "0" or "<node>-<digits>" on this deployment of ${nodes} Redis nodes, got ${shown}.`;
  }
  if (nodes === undefined) return `must be "0" or digits on this deployment (one Redis node), got ${shown}.`;
  const node = Number(match[1]);
  if (node >= nodes) return `names Redis node ${node}, but there are ${nodes} nodes (0 to ${nodes - 1}): start again from "0", got ${shown}.`;
  if (match[3] !== undefined && Number(match[3]) >= 2 ** nodes) return `names skipped nodes beyond the ${nodes} of this deployment, got ${shown}.`;
  return undefined;
}

/** Nodes a cursor names (Cluster masters, quorum nodes); `undefined` where a cursor names none. */
async function nodeCount(manager: LockManager): Promise<number | undefined> {
  const { clients } = manager;
  if (clients.length > 1) return clients.length;
  if (clients.length === 1 && driverFor(clients[0]!).isCluster) return (await driverFor(clients[0]!).masters()).length;
  return undefined;
}

/** A quorum node that does not answer a scan within this is skipped for the next one. */
const QUORUM_SCAN_TIMEOUT_MS = 1_000;

/**
 * SCAN steps from `cursor` until `count` candidates are found, the scan is complete, or the work
 * budget is spent. COUNT starts at the page size (a keyspace of locks fills the page in one
 * step) and doubles (a keyspace of other keys is crossed in few steps). The last step may bring
 * more than `count`: a SCAN cursor cannot stop within a step, so the page takes them all. A step
 * that gets no answer (`undefined`: a quorum node) ends the page where it got to; `undefined`
 * when the first one got none.
 */
async function scanUntilFull(
  step: (cursor: string, count: number) => Promise<{ next: string; keys: string[] } | undefined>,
  cursor: string,
  count: number,
  work: number,
): Promise<{ next: string; keys: string[] } | undefined> {
  const keys: string[] = [];
  let next = cursor;
  let size = Math.min(count, MAX_SCAN_COUNT);
  let spent = 0;
  do {
    const page = await step(next, size);
    if (page === undefined) return spent === 0 ? undefined : { next, keys };
    for (const key of page.keys) if (isListed(key)) keys.push(key);
    next = page.next;
    spent += size;
    size = Math.min(size * 2, MAX_SCAN_COUNT);
  } while (next !== '0' && keys.length < count && spent < work);
  return { next, keys };
}

/**
 * Lock keys are `<prefix>{<key>}`, a semaphore's holders `<prefix>{<key>}:holders`; their other
 * siblings end in `:fence`, `:queue`..., which the pattern mostly leaves out and `isListed` drops.
 */
function lockPattern(client: RedisClient, manager: LockManager): string {
  return `${escapeGlob(clientKeyPrefix(client) + manager.keyPrefix)}{*[}s]`;
}

const SEMAPHORE_SUFFIX = '}:holders';

function isListed(redisKey: string): boolean {
  return redisKey.endsWith('}') || redisKey.endsWith(SEMAPHORE_SUFFIX);
}

/** `fullPrefix`: what stands before `{<key>}` in the store's key names (client prefix and module prefix). */
async function inspectAll(manager: LockManager, { next, keys }: { next: string; keys: string[] }, fullPrefix: string): Promise<LockPage> {
  // Whoever can write to Redis writes under the prefix too: a name this library never writes (a
  // key it would refuse, a value of another type) is left out, not allowed to fail the page and
  // hide every lock on it. An unreachable Redis still fails the page.
  const userKeys = [...new Set(keys.map((key) => userKey(key, fullPrefix)))].filter(isLockKey).sort();
  const locks = await Promise.all(userKeys.map((key) => manager.inspect(key).catch(skipWrongType)));
  return { cursor: next, complete: next === '0', locks: locks.filter((lock): lock is LockInspection => lock !== undefined && (lock.held || lock.semaphore !== undefined)) };
}

function isLockKey(key: string): boolean {
  try {
    checkLockKey(key);
    return true;
  } catch {
    return false;
  }
}

function skipWrongType(error: unknown): undefined {
  if (/^WRONGTYPE/.test(String((error as Error)?.message))) return undefined;
  throw error;
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
  const masters = await inAgreedOrder(await driver.masters());
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

/**
 * The masters in an order every instance of the application agrees on, by their run ids: a
 * client lists them in the order it learnt them (its seed list), so a cursor handed out by one
 * instance and passed to another behind a load balancer would name another master, skipping a
 * whole master's locks. A master whose INFO fails fails the page: placed anywhere, it would shift
 * the others under a cursor handed out before.
 */
async function inAgreedOrder(masters: RedisNode[]): Promise<RedisNode[]> {
  const ids = await Promise.all(
    masters.map(async (master) => {
      const id = /run_id:(\w+)/.exec(await master.info('server'))?.[1];
      if (id === undefined) throw new RedisLockError('A Redis Cluster master answered INFO without its run_id: the board cannot number the masters.');
      return id;
    }),
  );
  return masters.map((master, i) => ({ master, id: ids[i]! })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(({ master }) => master);
}

function plainCursor(cursor: string): string {
  return /^\d+$/.test(cursor) ? cursor : '0';
}

/** The caller's key back from `<client prefix><prefix>{<key>}` or its `:holders` (see `lockRedisKeys`). */
function userKey(redisKey: string, fullPrefix: string): string {
  const end = redisKey.endsWith('}') ? -1 : -SEMAPHORE_SUFFIX.length;
  const tagged = redisKey.slice(fullPrefix.length + 1, end);
  return tagged.startsWith('\\') ? tagged.slice(1) : tagged;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
