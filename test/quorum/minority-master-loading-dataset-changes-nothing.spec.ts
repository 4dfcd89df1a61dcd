import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { datasetLoading, loadingServerArgs, type DatasetLoading } from '../support/loading-dataset.js';
import { nextEvent } from '../support/lock-app.js';
import { clientsOf, useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * docs/deployment.md (quorum mode): "a minority of failed or frozen nodes changes nothing", and a
 * lock is "released on all (a master that missed a release a majority confirmed ... is sent it
 * again at `app.close()`)". Here the minority is a master loading its dataset (a real DEBUG RELOAD
 * kept going: test/support/loading-dataset.ts), which answers every script LOADING: acquire(),
 * tryAcquire(), isLocked(), inspect(), extend(), the watchdog's renewals and release() work on the
 * other two, nothing is written to the loading master, and the release it refused reaches it once
 * it answers again, by `app.close()` at the latest, its copy's lease still long. A raw client sees
 * the master refuse LOADING after every call, and INFO commandstats counts the scripts it refused.
 */
const args = [0, 1, 2].map(() => loadingServerArgs());
afterAll(() => args.forEach((each) => each.remove()));

describe('quorum mode with one master of three loading its dataset (LOADING)', () => {
  const nodes = useQuorumNodes((i) => args[i]!.args);
  let loading: DatasetLoading | undefined;
  beforeAll(async () => {
    loading = await datasetLoading(nodes.servers[0]!.url, { keys: 20_000, delayUs: 1_000 });
  });
  afterAll(() => loading?.close());

  it('every call works on the other two masters, and the release the loading master missed reaches it once it answers', { timeout: 60_000 }, async () => {
    // Opened (ready) before the reload: a new ioredis connection waits out the loading before its first command.
    const raw = clientsOf(nodes.servers);
    onTestFinished(() => raw.forEach((client) => client.disconnect()));
    await Promise.all(raw.map((client) => client.ping()));
    const app = await nodes.app({ ttl: 20_000, renewInterval: 300 });
    const held = await app.locks.acquire('minority:held');
    // A copy on every master, the loading one included (the reload keeps it with its lease); the
    // acquisition ends once a majority granted it, the third grant landing after.
    await expect.poll(() => Promise.all(raw.map((client) => client.exists('lock:{minority:held}'))), { timeout: 5_000, interval: 20 }).toEqual([1, 1, 1]);
    const refusedBefore = await rejectedScriptCalls(raw[0]!);
    const endLoading = await loading!.start();

    const acquired = await app.locks.acquire('minority:new', { waitTimeout: 10_000 });
    const tried = await app.locks.tryAcquire('minority:try');
    expect(acquired.held).toBe(true);
    expect(tried?.held).toBe(true);
    expect(await app.locks.isLocked('minority:held')).toBe(true);
    expect(await app.locks.inspect('minority:held')).toMatchObject({ key: 'minority:held', held: true });
    await held.extend();
    // The watchdog's renewal, sent after the reload began.
    await nextEvent(app.locks.events$, 'renewed', 10_000);
    await acquired.release();
    await tried!.release();
    await held.release();
    // Each went to the loading master too, which refused it; still loading now.
    expect(await rejectedScriptCalls(raw[0]!)).toBeGreaterThan(refusedBefore);
    expect(await loading!.refusesLoading()).toBe(true);
    // Released where they were granted.
    for (const client of raw.slice(1)) {
      expect(await client.exists('lock:{minority:new}', 'lock:{minority:try}', 'lock:{minority:held}')).toBe(0);
    }

    await endLoading();
    // Nothing was written to it while it loaded; the held lock's copy is there, its lease long.
    expect(await raw[0]!.exists('lock:{minority:new}', 'lock:{minority:try}')).toBe(0);
    const left = await raw[0]!.pttl('lock:{minority:held}');
    // Sent again once it answers (-2: gone already), or at app.close(): never left to its lease.
    expect(left === -2 || left > 10_000).toBe(true);
    await app.close();
    expect(await raw[0]!.exists('lock:{minority:held}')).toBe(0);
  });
});

/** Script calls (EVALSHA, EVAL) Redis refused before running them, as INFO commandstats counts them. */
async function rejectedScriptCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  let rejected = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval|evalsha_ro|eval_ro):.*\brejected_calls=(\d+)/gm)) rejected += Number(match[1]);
  return rejected;
}
