import { createHash } from 'node:crypto';
import type { LockInspection } from '../../../interfaces/lock-inspection.interface.js';
import type { LockManager } from '../../engine/lock-manager.js';
import { driverFor } from './drivers/driver-for.js';
import { clientKeyPrefix } from './lock-scripts.js';
import type { RedisClient } from './drivers/redis-client.js';
import type { RedisNode } from './drivers/redis-driver.js';
import { lockRedisKeys, checkLockKey } from '../../keys/lock-key.js';
import { parseHolder } from '../../engine/holder.js';
import { RedisLockError } from '../../../errors/redis-lock.error.js';
import { READ_HELD } from '../../rwlock/read-keys.js';
import { settleWithin, TIMED_OUT } from '../../time/settle-within.js';
import { ForeignDataRead } from '../../engine/store-failure.js';

/**
 * A lock as the board lists it: what `inspect()` says, and for a lock one holder holds an opaque
 * name of that acquisition (a digest of its owner token), which a release by force must repeat.
 */
export type ListedLock = LockInspection & { holderId?: string };

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
  locks: ListedLock[];
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
 * a node that does not answer, and lists a lock on the pages of each node that holds it (each
 * key is inspected on the majority). The cursor must be `'0'` or one this function returned
 * (see `cursorProblem`).
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
  const match = /^(\d+)-(\d+(?:r[0-9a-f]+)?)(?:s(\d+))?$/.exec(cursor);
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
    // Each node's pages list what that node holds, a majority's lock on each node holding it:
    // whether an earlier node listed it in its turn cannot be told afterwards (one that lost
    // the lock, restarted empty, has it again once its holder renews).
    return inspectAll(manager, { next, keys: found.keys }, clientKeyPrefix(client) + manager.keyPrefix);
  }
}

function bitCount(mask: number): number {
  let count = 0;
  for (let rest = mask; rest > 0; rest >>>= 1) count += rest & 1;
  return count;
}

/**
 * Why `cursor` is not one `listLocks` hands out on this deployment, or `undefined` when it is:
 * `'0'`, else an unsigned 64-bit SCAN cursor, with `r<server>` after it (see `scanServer`),
 * prefixed with `<slot>-` on a Cluster (a slot some master serves first; `m<digest>` at the end,
 * see `slotsWalked`) and `<node index>-` in
 * quorum mode (in range, with `s<mask>` at the end once a node was skipped).
 */
export async function cursorProblem(manager: LockManager, cursor: string): Promise<string | undefined> {
  const shown = JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 40)}…` : cursor);
  const match = /^(?:(\d{1,10})-)?(\d{1,20})(?:r([0-9a-f]{8}))?(?:s(\d{1,10})|m([0-9a-f]{8}))?$/.exec(cursor);
  if (match === null || BigInt(match[2]!) > MAX_SCAN_CURSOR) {
    return `must be "0" or a cursor this board handed out (digits, "<node>-<digits>" on a Cluster or in quorum mode), got ${shown}.`;
  }
  if (cursor === '0') return undefined;
  const { clients } = manager;
  // A server's tag: on Redis only, after a cursor within a node (the in-memory store has none).
  if (match[3] !== undefined && (clients.length === 0 || match[2] === '0')) return `is not a cursor this board hands out on this deployment, got ${shown}.`;
  // The nodes a quorum walk skipped (see listLocks): quorum mode only, after a node index.
  if (match[4] !== undefined && (match[1] === undefined || clients.length < 2)) return `is not a cursor this board hands out on this deployment, got ${shown}.`;
  const cluster = clients.length === 1 && driverFor(clients[0]!).isCluster;
  // The slots a Cluster walk has scanned (see slotsWalked): on a Cluster only, after a slot.
  if (match[5] !== undefined ? !cluster || match[1] === undefined : cluster && match[1] !== undefined) return `is not a cursor this board hands out on this deployment, got ${shown}.`;
  if (match[1] === undefined) {
    if (clients.length > 1) return `must be "0" or "<node>-<digits>" on this deployment of ${clients.length} Redis nodes, got ${shown}.`;
    return cluster ? `must be "0" or "<slot>-<digits>" on a Redis Cluster, got ${shown}.` : undefined;
  }
  if (clients.length < 2 && !cluster) return `must be "0" or digits on this deployment (one Redis node), got ${shown}.`;
  const node = Number(match[1]);
  if (cluster) {
    const masters = await bySlot(await driverFor(clients[0]!).masters());
    const at = masters.findIndex((master) => master.slot === node);
    if (at < 0) return `names the master that serves slot ${node} first, but no master does now (the Cluster changed): start again from "0", got ${shown}.`;
    if (match[5] !== slotsWalked(masters, at, match[2]!)) return `is from before the Cluster moved slots onto the masters the walk has scanned (a lock moved there would be missed): start again from "0", got ${shown}.`;
    return undefined;
  }
  if (node >= clients.length) return `names Redis node ${node}, but there are ${clients.length} nodes (0 to ${clients.length - 1}): start again from "0", got ${shown}.`;
  if (match[4] !== undefined && Number(match[4]) >= 2 ** clients.length) return `names skipped nodes beyond the ${clients.length} of this deployment, got ${shown}.`;
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
  const locks = await Promise.all(userKeys.map((key) => manager.inspectWithOwner(key).then(listed, skipWrongType)));
  return { cursor: next, complete: next === '0', locks: locks.filter((lock): lock is ListedLock => lock !== undefined && (lock.held || lock.semaphore !== undefined)) };
}

function listed({ inspection, owner }: { inspection: LockInspection; owner: string | null }): ListedLock {
  return owner === null || owner === READ_HELD ? inspection : { ...inspection, holderId: holderId(owner) };
}

/**
 * An acquisition's name on the board: a digest of its owner token, which is unique to it (a
 * random part) and lets nobody release the lock through the release script, as the token would.
 */
export function holderId(owner: string): string {
  return createHash('sha256').update(owner).digest('base64url').slice(0, 22);
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
  // inspect() names the call in its error and keeps the client's reply as the cause.
  const cause = (error as Error)?.cause;
  if (cause instanceof ForeignDataRead || /^WRONGTYPE/.test(String((cause as Error | undefined)?.message))) return undefined;
  throw error;
}

/**
 * Deletes the lock of the acquisition the board listed as `holder` (its `holderId`), through the
 * owner-checked release script with the owner token read just before, and hands it to the next
 * waiter as a normal release does. A lock another acquisition holds by then (the operator
 * confirmed the release of one that has ended) is left alone. Returns whether it was released.
 */
export async function forceRelease(manager: LockManager, key: string, holder: string): Promise<boolean> {
  const names = lockRedisKeys(manager.keyPrefix, checkLockKey(key));
  const snapshot = await manager.store.inspect(names);
  // Held by readers ('~r', see rwlock/): each reader renews its own key and would never learn
  // of a forced release, so a writer could run beside them. Readers are left alone.
  if (snapshot.owner === null || snapshot.owner === READ_HELD || holderId(snapshot.owner) !== holder) return false;
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

/**
 * One SCAN step of a walk over one client. A node cursor is `<SCAN cursor>r<server>` (`'0'` at a
 * node's start), where `<server>` begins the run id of the server that handed out the SCAN cursor:
 * a restart or failover changes it, and a SCAN cursor means nothing on another server's table
 * (hashed with another seed), so a node whose server changed is scanned again from its start.
 * On a Cluster the walk goes through the masters in the order of the lowest slot each serves,
 * `<slot>-<node cursor>`: a master restarted, failed over or added elsewhere in the walk keeps
 * the others' names, where a place in the client's list (its seed order) or in an order of run
 * ids would not.
 */
async function scanPage(client: RedisClient, cursor: string, pattern: string, count: number): Promise<{ next: string; keys: string[] }> {
  const driver = driverFor(client);
  if (!driver.isCluster) return scanServer((await driver.masters())[0]!, cursor, pattern, count);
  const masters = await bySlot(await driver.masters());
  const match = /^(\d+)-(\d+(?:r[0-9a-f]+)?)(?:m([0-9a-f]+))?$/.exec(cursor);
  const at = match === null ? 0 : masters.findIndex((master) => master.slot === Number(match[1]));
  if (at < 0) throw new RedisLockError(`The Redis Cluster changed during the walk of the locks: no master serves slot ${match![1]} first now. Start again from "0".`);
  if (match !== null && match[3] !== slotsWalked(masters, at, match[2]!)) throw new RedisLockError(CLUSTER_SLOTS_MOVED);
  const { slot, node } = masters[at]!;
  const found = await scanServer(node, match === null ? '0' : match[2]!, pattern, count);
  if (found.next !== '0') return { next: `${slot}-${found.next}m${slotsWalked(masters, at, found.next)}`, keys: found.keys };
  const following = masters[at + 1];
  return { next: following === undefined ? '0' : `${following.slot}-0m${slotsWalked(masters, at + 1, '0')}`, keys: found.keys };
}

/**
 * A digest of the slots the masters a Cluster walk has scanned serve (those before master `at`,
 * and `at` itself once its scan began, `nodeCursor` not `'0'`), which its cursor carries: a lock
 * whose slot moved onto one of them from a master not scanned yet (a reshard, one slot at a
 * time) would be on neither master's turn. Moves between masters still to come are no matter.
 */
function slotsWalked(masters: readonly { ranges: readonly [number, number][] }[], at: number, nodeCursor: string): string {
  const walked = masters.slice(0, nodeCursor === '0' ? at : at + 1).map((master) => master.ranges.map(([from, to]) => `${from}-${to}`).join(','));
  return createHash('sha256').update(walked.join(';')).digest('hex').slice(0, SLOTS_DIGEST_LENGTH);
}

const SLOTS_DIGEST_LENGTH = 8;
const CLUSTER_SLOTS_MOVED = 'The Redis Cluster moved slots onto the masters the walk has scanned (a lock moved there would be missed): start again from "0".';

async function scanServer(node: RedisNode, nodeCursor: string, pattern: string, count: number): Promise<{ next: string; keys: string[] }> {
  const match = /^(\d+)(?:r([0-9a-f]+))?$/.exec(nodeCursor);
  const server = async (): Promise<string> => {
    const id = /run_id:([0-9a-f]+)/.exec(await node.info('server'))?.[1];
    if (id === undefined) throw new RedisLockError('A Redis server answered INFO without its run_id: the board cannot tell whether it restarted during the walk.');
    return id.slice(0, SERVER_TAG_LENGTH);
  };
  // Read before the SCAN: a server replaced after it would tag the old table's cursor as its own.
  const tag = await server();
  const from = match?.[2] === tag ? match[1]! : '0';
  const [next, keys] = await node.scan(from, pattern, count);
  return { next: next === '0' ? '0' : `${next}r${tag}`, keys };
}

/** Characters of a run id a cursor carries: enough that a restart is told apart, short enough for the 40 of a cursor. */
const SERVER_TAG_LENGTH = 8;

/**
 * The masters that serve slots, each with the lowest one, in slot order: what every instance of
 * the application sees alike, and what a restart or a failover to a replica keeps. The masters
 * must serve every slot between them: one the client does not know (dropped from its pool while
 * it reconnected, not learnt yet) or one that is down would have its locks left out of a walk
 * that says it is complete, so the page fails instead, as it does when a master's
 * `CLUSTER NODES` fails.
 */
async function bySlot(masters: RedisNode[]): Promise<{ slot: number; node: RedisNode; ranges: [number, number][] }[]> {
  const served = await Promise.all(masters.map(async (node) => slotRanges(await node.clusterNodes())));
  const covered = served.flat().reduce((sum, [from, to]) => sum + to - from + 1, 0);
  if (covered < CLUSTER_SLOTS) {
    throw new RedisLockError(`The masters this client knows serve ${covered} of the Redis Cluster's ${CLUSTER_SLOTS} slots (one is down or not known yet): the locks cannot all be listed. Try again.`);
  }
  return masters
    .map((node, i) => ({ slot: Math.min(...served[i]!.map(([from]) => from)), node, ranges: served[i]!.sort((a, b) => a[0] - b[0]) }))
    .filter((master) => Number.isFinite(master.slot))
    .sort((a, b) => a.slot - b.slot);
}

const CLUSTER_SLOTS = 16_384;

/** The slot ranges on the `myself` line of `CLUSTER NODES` (`a-b` or a single slot; `[...]` are migrations, not served). */
function slotRanges(nodes: string): [number, number][] {
  const line = nodes.split('\n').find((entry) => entry.split(' ')[2]?.split(',').includes('myself'));
  return (line?.trim().split(' ').slice(8) ?? [])
    .filter((range) => /^\d+(?:-\d+)?$/.test(range))
    .map((range) => {
      const [from, to = from] = range.split('-').map(Number);
      return [from!, to!];
    });
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
