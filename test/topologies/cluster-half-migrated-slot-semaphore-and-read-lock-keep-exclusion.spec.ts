import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { clusterSlot } from '../../lib/core/keys/cluster-slot.js';
import { slotMasters, useRedisCluster } from '../support/redis-cluster.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import type { LockLostError } from '../../lib/index.js';

/**
 * Found by review. docs/deployment.md, Redis Cluster: "a lock whose slot is migrating or has moved (`redis-cli
 * --cluster reshard`, a stale slot map) is renewed on its own as a declared key, through ioredis'
 * ASK/MOVED handling"; test/scale/cluster-hardening.spec.ts keeps a MUTEX through a slot
 * half-migrated for longer than its ttl. A read lock and a semaphore permit are not kept safe
 * that way. Their holder's own key (`P{K}:reader:<token>`, `P{K}:permit:<token>`) is what the
 * watchdog renews; the keys every other caller checks (the readers hash and the `~r` lock key;
 * the semaphore's holders hash) are only pushed on by those renewals as undeclared keys
 * (`renew_guards`). Once the holder's own key has moved to the importing node and the shared
 * keys have not (a reshard moving that slot, stalled or slow), the renewal runs on the importing
 * node (ASK), found the shared keys missing there, still answered RENEWED, and the shared keys
 * expired on the source at the end of their lease. When the slot's migration completed, a writer
 * (read lock) or a second holder (semaphore of 1 permit) got in, while the first holder still
 * held in its own eyes and kept being renewed: two holders, and neither was told. A renewal that
 * does not find the guards with the own key now renews nothing: the holder is told at its deadline.
 */
const ttl = 1_200;
const renewInterval = 300;

describe('Redis Cluster: a slot half-migrated for longer than the ttl, under a read lock or a semaphore permit', () => {
  const own = useRedisCluster();

  // Without the migration such locks stay held and keep rivals out (the behaviour suite).
  const CASES = [
    ['read lock', 'migrated'],
    ['semaphore', 'migrated'],
  ] as const;

  it.each(CASES)('%s (%s): its holder is told of the loss rather than sharing the lock', { timeout: 60_000 }, async (kind, mode) => {
    const { cluster, admin } = own;
    const clients = [new Cluster(cluster.nodes), new Cluster(cluster.nodes)];
    for (const client of clients) client.on('error', () => undefined);
    const app = await createLockApp({ redis: clients[0]!, ttl, renewInterval });
    const rival = await createLockApp({ redis: clients[1]!, ttl, renewInterval });
    const key = `half:${kind.replace(' ', '-')}:${mode === 'migrated' ? 'm' : 'c'}`;
    const take = (service: typeof app.locks) => (kind === 'read lock' ? service.acquire(key, { mode: 'read' }) : service.acquire(key, { limit: 1 }));
    const rivalTry = () => (kind === 'read lock' ? rival.locks.tryAcquire(key) : rival.locks.tryAcquire(key, { limit: 1 }));
    const lock = await take(app.locks);
    const slot = clusterSlot(`lock:{${key}}`);
    const { source, target, src, dst } = await slotMasters(admin, slot);
    const [host, port] = target.address.split(':');
    try {
      // Control: the rival is kept out while the first holder holds.
      expect(await rivalTry()).toBeNull();
      if (mode === 'migrated') {
        const keys = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
        const own = keys.find((each) => each.includes(kind === 'read lock' ? ':reader:' : ':permit:'))!;
        await dst.cluster('SETSLOT', slot, 'IMPORTING', source.id);
        await src.cluster('SETSLOT', slot, 'MIGRATING', target.id);
        await src.migrate(host!, port!, own, 0, 5_000); // the holder's own key first, as a reshard may
      }
      await sleep(2 * ttl);
      if (mode === 'migrated') {
        // The reshard of this slot goes on and completes.
        const left = (await src.cluster('GETKEYSINSLOT', slot, 100)) as string[];
        if (left.length > 0) await src.migrate(host!, port!, '', 0, 5_000, 'KEYS', ...left);
        for (const node of [dst, src]) await node.cluster('SETSLOT', slot, 'NODE', target.id);
      }
      await sleep(2 * renewInterval);
      const held = lock.held;
      const got = await rivalTry();
      if (mode === 'migrated') {
        // Its renewals could not find the guards with its own key: it was told of the loss at its
        // deadline (it was renewed all along, never told, while the rival got in beside it).
        expect({ held, reason: (lock.signal.reason as LockLostError | undefined)?.reason }).toEqual({ held: false, reason: 'expired' });
      } else {
        expect({ held, rival: got === null ? 'kept out' : 'got in while the first holder holds' }).toEqual({ held: true, rival: 'kept out' });
      }
    } finally {
      src.disconnect();
      dst.disconnect();
      await app.close();
      await rival.close();
      for (const client of clients) client.disconnect();
    }
  });
});
