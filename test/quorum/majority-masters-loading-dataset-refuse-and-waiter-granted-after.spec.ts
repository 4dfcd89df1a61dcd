import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { LockLostError, LockNotAcquiredError, RedisUnavailableError, type LockEvent } from '../../lib/index.js';
import { datasetLoading, LOADING, LOADING_TEXT, loadingServerArgs, type DatasetLoading } from '../support/loading-dataset.js';
import { countAttempts } from '../support/mechanism.js';
import { clientsOf, useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * docs/deployment.md (quorum mode): "a majority failure fails with `LockNotAcquiredError` whose
 * cause says `Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed (node
 * 0: ...)`", and docs/guarantees.md: LOADING passes, a waiting call is asked again and gets the
 * lock once it ends, `tryAcquire()`, `isLocked()` and `inspect()` reject with a
 * `RedisUnavailableError` (503 over HTTP). Here the majority is two masters of three loading their
 * dataset (a real DEBUG RELOAD kept going: test/support/loading-dataset.ts); a raw client sees
 * both refuse LOADING after the calls. The master that answered keeps nothing of a refused
 * tryAcquire() or of a wait that ran out: its grant is given back. A held lock whose lease runs
 * out so is told once that Redis refused its renewals, each master's refusal quoted. Found so
 * (session 51): the watchdog's batch left renewals a majority refused LOADING undecided, as if
 * the masters were silent, and the loss said "Redis unreachable or the event loop blocked".
 */
const args = [0, 1, 2].map(() => loadingServerArgs());
afterAll(() => args.forEach((each) => each.remove()));

describe('quorum mode with two masters of three loading their dataset (LOADING)', () => {
  const nodes = useQuorumNodes((i) => args[i]!.args);
  const loading: DatasetLoading[] = [];
  beforeAll(async () => {
    loading.push(...(await Promise.all(nodes.servers.slice(0, 2).map((server) => datasetLoading(server.url, { keys: 20_000, delayUs: 1_000 })))));
  });
  afterAll(() => Promise.all(loading.map((each) => each.close())));
  const bothLoading = async (): Promise<boolean[]> => Promise.all(loading.map((each) => each.refusesLoading()));
  const settle = <T>(call: Promise<T>): Promise<T | Error> => call.catch((error: unknown) => error as Error);

  it('tryAcquire(), isLocked() and inspect() reject with a RedisUnavailableError saying the quorum was not reached; acquire() waits and gets the lock once loading ends, one whose waitTimeout runs out first fails so; the answering master keeps nothing', { timeout: 60_000 }, async () => {
    // Opened (ready) before the reload: a new ioredis connection waits out the loading before its first command.
    const raw = clientsOf(nodes.servers);
    onTestFinished(() => raw.forEach((client) => client.disconnect()));
    await Promise.all(raw.map((client) => client.ping()));
    // A round waits a tenth of the ttl (500 ms at most) for each master (see below).
    const app = await nodes.app({ ttl: 5_000 });
    expect(await app.locks.isLocked('majority:warm')).toBe(false);
    const ends = [await loading[0]!.start(), await loading[1]!.start()];

    const calls = {
      tryAcquire: await settle(app.locks.tryAcquire('majority:try')),
      isLocked: await settle(app.locks.isLocked('majority:try')),
      inspect: await settle(app.locks.inspect('majority:try')),
    };
    const attempts = countAttempts(app.locks);
    onTestFinished(() => attempts.stop());
    const waiter = settle(app.locks.acquire('majority:wait', { waitTimeout: 30_000 }));
    const short = await settle(app.locks.acquire('majority:short', { waitTimeout: 1_000 }));
    await expect.poll(() => attempts.count, { timeout: 10_000, interval: 50 }).toBeGreaterThan(3);
    // Still loading after every call was answered: each met the refusal.
    expect(await bothLoading()).toEqual([true, true]);
    for (const [name, error] of Object.entries(calls)) {
      expect(error, name).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message, name).toMatch(/Quorum not reached to (?:acquire|check|inspect) the lock: 1 of 3 Redis nodes (?:agreed|answered), 2 needed \(/);
      expect((error as Error).message, name).toMatch(LOADING_TEXT);
    }
    expect(short).toBeInstanceOf(LockNotAcquiredError);
    expect(((short as Error).cause as Error | undefined)?.message).toMatch(/^Quorum not reached to acquire the lock: 1 of 3 Redis nodes agreed, 2 needed \(/);
    // The master that answered granted, and gave back: nothing of the refused calls is left on it.
    await expect.poll(() => raw[2]!.exists('lock:{majority:try}', 'lock:{majority:short}'), { timeout: 5_000, interval: 50 }).toBe(0);

    await Promise.all(ends.map((end) => end()));
    const lock = await waiter;
    if (lock instanceof Error) throw lock;
    expect(lock.held).toBe(true);
    // Granted by a majority (a master may still be loading the keys the test wrote).
    const copies = await Promise.all(raw.map((client) => client.exists('lock:{majority:wait}')));
    expect(copies.filter((copy) => copy === 1).length).toBeGreaterThanOrEqual(2);
    expect(await Promise.all(raw.map((client) => client.exists('lock:{majority:try}', 'lock:{majority:short}')))).toEqual([0, 0, 0]);
    await lock.release();
  });

  it("a held lock whose lease runs out while the majority refuses its renewals LOADING is told once that Redis refused them, each master's refusal quoted", { timeout: 60_000 }, async () => {
    const raw = clientsOf(nodes.servers);
    onTestFinished(() => raw.forEach((client) => client.disconnect()));
    await Promise.all(raw.map((client) => client.ping()));
    // A round waits a tenth of the ttl (500 ms at most) for each master: 5 s leave a loading
    // master, which serves its clients only between keys, time to answer under load.
    const app = await nodes.app({ ttl: 5_000, renewInterval: 300 });
    const lost: LockEvent[] = [];
    const subscription = app.locks.events$.subscribe((event) => event.type === 'lost' && lost.push(event));
    onTestFinished(() => subscription.unsubscribe());
    const lock = await app.locks.acquire('majority:lease');
    const ends = [await loading[0]!.start(), await loading[1]!.start()];
    await expect.poll(() => lock.signal.aborted, { timeout: 10_000, interval: 50 }).toBe(true);
    // Still loading once the holder was told: every renewal of its lease met the refusal.
    expect(await bothLoading()).toEqual([true, true]);
    const error = lock.signal.reason as LockLostError;
    expect(error).toBeInstanceOf(LockLostError);
    expect(error.reason).toBe('expired');
    // Failed: 'Lock "majority:lease" (fencing token n) was lost: the lease ran out before a renewal succeeded (Redis unreachable or the event loop blocked).'
    expect(error.message).not.toMatch(/unreachable/);
    expect(error.message).toMatch(/^Lock "majority:lease" \(fencing token \d+\) was lost: the lease ran out while Redis refused its renewals for now \(Quorum not reached to renew the lock: 1 of 3 Redis nodes answered, 2 needed \(node 0: LOADING .*; node 1: LOADING .*\)\)\.$/);
    expect(String((error.cause as Error | undefined)?.message)).toMatch(LOADING_TEXT);
    expect(lost).toMatchObject([{ type: 'lost', key: 'majority:lease', reason: 'expired' }]);
    await Promise.all(ends.map((end) => end()));
    expect(lost).toHaveLength(1);
    expect(LOADING.test(String(((error.cause as Error).cause as Error | undefined)?.message))).toBe(true);
  });
});
