import { Cluster } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { lockNameOnMaster, useRedisCluster } from '../support/redis-cluster.js';

/**
 * Found by review (drivers). An ioredis `Cluster` handed in with `enableAutoPipelining: true` (a common
 * throughput option). ioredis groups auto-pipelined commands by the slot of their first argument
 * (autoPipelining.js: `calculateSlot(getFirstValueInFlattenedArray(args))`); for the `EVALSHA`/`EVAL`
 * the driver sends (ioredis-driver.ts `bareScript`, `evalScript`) that is the script's SHA1 or
 * text, not a key. So every call of one script made in the same tick lands in one pipeline,
 * whatever master its lock lives on, and ioredis then fails that whole pipeline with "All keys in
 * the pipeline should belong to the same slots allocation group". Releases of locks on two
 * masters in one tick are "not answered" (the locks stay in Redis for their lease), a multi-key
 * lock's release fails the same way, and its acquisition never succeeds.
 * Such a client is now refused at startup unless it leaves the two script commands out of its
 * auto-pipelining (`autoPipeliningIgnoredCommands`), with which every case below passes.
 */
describe('ioredis Cluster with enableAutoPipelining', () => {
  const own = useRedisCluster();
  let app: LockApp | undefined;
  let client: Cluster | undefined;
  afterEach(async () => {
    await app?.close();
    client?.disconnect();
    app = client = undefined;
  });

  it('is refused at startup unless the lock scripts are left out of its auto-pipelining', async () => {
    for (const ignored of [undefined, ['evalsha']]) {
      client = new Cluster(own.cluster.nodes, { enableAutoPipelining: true, ...(ignored ? { autoPipeliningIgnoredCommands: ignored } : {}) });
      client.on('error', () => undefined);
      const refused = await createLockApp({ redis: client }).then(
        async (started) => {
          await started.close();
          return undefined;
        },
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(InvalidLockOptionsError);
      expect((refused as Error).message).toContain("autoPipeliningIgnoredCommands: ['evalsha', 'eval']");
      client.disconnect();
    }
    client = undefined;
  });

  async function open(): Promise<LockApp> {
    client = new Cluster(own.cluster.nodes, { enableAutoPipelining: true, autoPipeliningIgnoredCommands: ['evalsha', 'eval'] });
    client.on('error', () => undefined);
    await client.ping();
    return (app = await createLockApp({ redis: client, ttl: 2_000 }));
  }

  it('releases two locks on two masters given back in the same tick', { timeout: 20_000 }, async () => {
    const locks = (await open()).locks;
    const names = [await lockNameOnMaster(own.cluster, 0, 'autopipe-release'), await lockNameOnMaster(own.cluster, 1, 'autopipe-release')];
    const held = await Promise.all(names.map((name) => locks.acquire(name)));
    const released = await Promise.all(held.map((lock) => lock.release().then(() => 'released', (error: Error) => error.message)));
    expect(released).toEqual(['released', 'released']);
    expect(await Promise.all(names.map((name) => own.admin.exists(`lock:{${name}}`)))).toEqual([0, 0]);
  });

  it('takes and gives back a multi-key lock whose keys live on two masters', { timeout: 20_000 }, async () => {
    const locks = (await open()).locks;
    const names = [await lockNameOnMaster(own.cluster, 0, 'autopipe-multi'), await lockNameOnMaster(own.cluster, 1, 'autopipe-multi')];
    const outcome = await locks.acquire(names, { waitTimeout: 3_000 }).then(
      async (lock) => {
        await lock.release();
        return 'taken and released';
      },
      (error: Error) => `${error.name}: ${error.message}`,
    );
    expect(outcome).toBe('taken and released');
  });

  it('keeps two locks on two masters past their ttl (the watchdog renews both)', { timeout: 20_000 }, async () => {
    const locks = (await open()).locks;
    const names = [await lockNameOnMaster(own.cluster, 0, 'autopipe-renew'), await lockNameOnMaster(own.cluster, 1, 'autopipe-renew')];
    const held = await Promise.all(names.map((name) => locks.acquire(name)));
    await sleep(3_000);
    expect(held.map((lock) => lock.held)).toEqual([true, true]);
    await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
  });
  // Found by review of the fix: the watchdog's renewals per slot (`renewMany`, what a Cluster uses
  // until every master is known to run Redis 7: for ever on Redis 6 masters, or with INFO refused)
  // are an ioredis `defineCommand` script, auto-pipelined under its own name and grouped by its
  // first argument, the key count: the renewals of locks on two masters shared one pipeline,
  // which the Cluster failed whole, and both locks were lost while Redis held them. This server is
  // Redis 7: the version the store learnt is set back to "not Redis 7" to take that path.
  it('keeps two locks on two masters past their ttl when renewals go per slot (renewMany)', { timeout: 20_000 }, async () => {
    const locks = (await open()).locks;
    const names = [await lockNameOnMaster(own.cluster, 0, 'autopipe-renew-many'), await lockNameOnMaster(own.cluster, 1, 'autopipe-renew-many')];
    const held = await Promise.all(names.map((name) => locks.acquire(name)));
    const store = (locks as unknown as { manager: { store: { redis7?: boolean; perMasterRenewals(): Promise<boolean> } } }).manager.store;
    await store.perMasterRenewals();
    store.redis7 = false;
    await sleep(3_000);
    expect(held.map((lock) => lock.held)).toEqual([true, true]);
    await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
  });
});
