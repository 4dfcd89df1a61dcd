/**
 * Found by review (twenty-ninth session): on a Redis Cluster the board walks the masters one after the other, in
 * the order of the lowest slot each serves, and a cursor stays valid while its master still
 * serves that lowest slot first. A reshard that moves another slot, with a lock in it, from a
 * master not yet scanned to one already scanned (redis-cli --cluster reshard / rebalance does
 * exactly this) is not noticed: the walk ends `complete: true` without that lock, held the whole
 * time. The code says a walk "never misses a lock held for the whole scan"; the docs only cover
 * a cursor whose own slot moved (400) and masters that do not serve every slot (the page fails).
 */
import type { INestApplication } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { lockNameOnMaster, slotMasters, useRedisCluster } from '../support/redis-cluster.js';

type Page = { cursor: string; complete: boolean; locks: { key: string }[] };

describe('the lock board walk on a Redis Cluster', () => {
  const own = useRedisCluster();
  let app: INestApplication | undefined;
  let client: Cluster | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    client?.disconnect();
  });

  it('refuses the walk\'s cursor once a reshard moved a lock\'s slot onto a master already scanned, and a walk from the start lists it', { timeout: 60_000 }, async () => {
    const { cluster, admin } = own;
    client = new Cluster(cluster.nodes);
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: client, isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminHeaderGuard], pageSize: 1 })],
    });
    const url = `${await listenOnLoopback(app)}/locks`;
    const page = async (cursor: string): Promise<Page> => {
      const response = await fetch(`${url}/api/locks?cursor=${encodeURIComponent(cursor)}`, { headers: { 'x-admin': 'yes' } });
      expect(response.status).toBe(200);
      return (await response.json()) as Page;
    };
    const locks = app.get(LockService);
    // One lock on each master; the walk goes master by master (pageSize 1: a page per lock).
    const names = await Promise.all([0, 1, 2].map((index) => lockNameOnMaster(cluster, index, `m${index}`)));
    const held = await Promise.all(names.map((name) => locks.acquire(name, { ttl: 60_000, autoRenew: false })));
    const moving = names[2]!;
    const slot = clusterSlot(`lock:{${moving}}`);
    const { source, src, dst } = await slotMasters(admin, slot);
    dst.disconnect();

    // Walk until the master that holds `moving` is the last one left to scan, and the one that
    // serves slot 0 is done.
    const listed: string[] = [];
    let cursor = '0';
    let complete = false;
    for (let i = 0; i < 10 && !complete; i++) {
      const next = await page(cursor);
      listed.push(...next.locks.map((lock) => lock.key));
      cursor = next.cursor;
      complete = next.complete;
      if (listed.includes(names[1]!)) break;
    }
    expect(listed).not.toContain(moving);
    // The target: a master already scanned (the one serving slot 0).
    const scannedTarget = String(await admin.cluster('NODES'))
      .split('\n')
      .find((line) => line.includes('master') && / 0-\d+/.test(line))!;
    const targetId = scannedTarget.split(' ')[0]!;
    const targetAddress = scannedTarget.split(' ')[1]!.split('@')[0]!;
    expect(targetId).not.toBe(source.id);
    // A reshard moves the slot of `moving` (not the lowest slot of its master) to that master.
    const to = new Redis(Number(targetAddress.split(':')[1]), targetAddress.split(':')[0]!);
    await to.cluster('SETSLOT', slot, 'IMPORTING', source.id);
    await src.cluster('SETSLOT', slot, 'MIGRATING', targetId);
    const keys = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
    expect(keys).toContain(`lock:{${moving}}`);
    await src.call('MIGRATE', targetAddress.split(':')[0]!, targetAddress.split(':')[1]!, '', 0, 5000, 'KEYS', ...keys);
    for (const node of [to, src]) await node.cluster('SETSLOT', slot, 'NODE', targetId);
    src.disconnect();
    to.disconnect();
    expect(await locks.isLocked(moving)).toBe(true);

    // The walk's cursor is refused (before: the walk went on, and ended complete without it).
    expect(complete).toBe(false);
    const refused = await fetch(`${url}/api/locks?cursor=${encodeURIComponent(cursor)}`, { headers: { 'x-admin': 'yes' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(/moved slots onto the masters the walk has scanned.*start again from "0"/);
    // Walked again from the start, the lock is listed where it went.
    const again: string[] = [];
    cursor = '0';
    for (let i = 0; i < 10 && !complete; i++) {
      const next = await page(cursor);
      again.push(...next.locks.map((lock) => lock.key));
      cursor = next.cursor;
      complete = next.complete;
    }
    expect({ complete, listedMoving: again.includes(moving) }).toEqual({ complete: true, listedMoving: true });
    await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
  });
});
