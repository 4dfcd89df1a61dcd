import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { FencedRedis, LockNotAcquiredError, RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { openClient } from '../support/handed-clients.js';
import { datasetLoading, LOADING, LOADING_TEXT, loadingServerArgs, type DatasetLoading } from '../support/loading-dataset.js';
import { createLockApp, nextEvent, type LockApp } from '../support/lock-app.js';
import { countAttempts } from '../support/mechanism.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { useOwnServer } from '../support/own-server.js';
import type { RedisLockModuleOptions } from '../../lib/index.js';

/**
 * docs/guarantees.md ("When Redis is down") and the errors table of docs/locks.md: `LOADING`, the
 * refusal of a server still loading its dataset after a restart, passes. A waiting call is asked
 * again and gets the lock once loading ends; `tryAcquire()`, `isLocked()`, `inspect()`,
 * `extend()` and a `FencedRedis` write reject with a `RedisUnavailableError` (503 over HTTP),
 * nothing written; a held lock's renewal is tried again and the lock kept if loading ends within
 * its lease; a release is sent again. Until now only a unit spec fed the library the reply's text.
 * Found so (session 51): a release refused LOADING rejected saying it "was not answered (LOADING
 * ...)", though Redis had answered, as a failover's READONLY and BUSY did; it now says Redis refused
 * it for now, as a waiting call's LockNotAcquiredError does.
 *
 * The window is a real one (test/support/loading-dataset.ts): `DEBUG RELOAD` of a few thousand 1 KB
 * keys, each load slowed by `key-load-delay`, so Redis answers LOADING until the test ends it. A
 * raw client is seen refused LOADING before and after each call asserted on, so each call met that
 * refusal, whatever the machine's speed.
 */
const loadingArgs = loadingServerArgs();
afterAll(() => loadingArgs.remove());

/** A client of each kind handed to the module: each words the refusal its own way. */
const CLIENTS: Record<string, (url: string) => Promise<{ client: RedisLockModuleOptions['redis']; close(): unknown }>> = {
  ioredis: async (url) => {
    const client = new Redis(url);
    client.on('error', () => undefined);
    return { client, close: () => client.disconnect() };
  },
  'node-redis': async (url) => {
    const client = await nodeRedisClient(url);
    return { client: client as never, close: () => client.close() };
  },
  GLIDE: (url) => openClient('GLIDE', url),
};

describe('a Redis server loading its dataset (LOADING)', () => {
  const server = useOwnServer(loadingArgs.args);
  let loading: DatasetLoading | undefined;
  beforeAll(async () => {
    loading = await datasetLoading(server.url());
  });
  afterAll(() => loading?.close());

  const refusesLoading = (): Promise<boolean> => loading!.refusesLoading();
  const startLoading = (): Promise<() => Promise<void>> => loading!.start();

  /** A lock app on a client of `name` the test opened (closed after the app). */
  async function lockApp(name: string, options: Partial<RedisLockModuleOptions> = {}): Promise<LockApp> {
    const handed = await CLIENTS[name]!(server.url());
    onTestFinished(async () => void (await handed.close()));
    const app = await createLockApp({ redis: handed.client, ...options });
    onTestFinished(() => app.close());
    return app;
  }

  /** What `call` settled with: its value or its error. */
  const settle = <T>(call: Promise<T>): Promise<T | Error> => call.catch((error: unknown) => error as Error);

  it.each(Object.keys(CLIENTS))('%s: tryAcquire(), isLocked(), inspect() and extend() reject RedisUnavailableError, and a held lock stays held', { timeout: 30_000 }, async (name) => {
    const app = await lockApp(name, { ttl: 20_000 });
    const held = await app.locks.acquire(`loading:held:${name}`);
    const endLoading = await startLoading();
    const calls = {
      tryAcquire: settle(app.locks.tryAcquire(`loading:try:${name}`)),
      isLocked: settle(app.locks.isLocked(`loading:held:${name}`)),
      inspect: settle(app.locks.inspect(`loading:held:${name}`)),
      extend: settle(held.extend(20_000)),
    };
    const settled = Object.fromEntries(await Promise.all(Object.entries(calls).map(async ([name, call]) => [name, await call] as const)));
    // Still loading after every call was answered: each met the refusal.
    expect(await refusesLoading()).toBe(true);
    for (const [name, error] of Object.entries(settled)) {
      expect(error, name).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message, name).toMatch(LOADING_TEXT);
      expect(String(((error as Error).cause as Error | undefined)?.message), name).toMatch(LOADING);
    }
    expect((settled.tryAcquire as Error).message).toMatch(new RegExp(`^tryAcquire\\("loading:try:${name}"\\): `));
    await endLoading();
    // Nothing half-done: no key of the refused tryAcquire(), and the held lock is its holder's still.
    expect(await server.admin().exists(`lock:{loading:try:${name}}`, `lock:{loading:try:${name}}:fence`)).toBe(0);
    expect(held.held).toBe(true);
    expect(await app.locks.isLocked(`loading:held:${name}`)).toBe(true);
    expect(await app.locks.tryAcquire(`loading:try:${name}`)).not.toBeNull();
  });

  it.each(Object.keys(CLIENTS))('%s: acquire() is asked again while Redis loads and gets the lock once loading ends; one whose waitTimeout runs out first says Redis refused it', { timeout: 30_000 }, async (name) => {
    const app = await lockApp(name);
    await (await app.locks.acquire(`loading:warm:${name}`)).release();
    const endLoading = await startLoading();
    const attempts = countAttempts(app.locks);
    onTestFinished(() => attempts.stop());
    const waiter = app.locks.acquire(`loading:wait:${name}`, { waitTimeout: 20_000 });
    const short = await settle(app.locks.acquire(`loading:short:${name}`, { waitTimeout: 1_000 }));
    // Asked again, not ended at the first refusal (one attempt of each call at least, then more).
    await expect.poll(() => attempts.count, { timeout: 10_000, interval: 50 }).toBeGreaterThan(3);
    expect(await refusesLoading()).toBe(true);
    expect(short).toBeInstanceOf(LockNotAcquiredError);
    expect((short as Error).message).toMatch(/: Redis refused it \((?:LOADING Redis is loading the dataset in memory|.*BusyLoadingError)/);
    expect(String(((short as Error).cause as Error | undefined)?.message)).toMatch(LOADING);
    await endLoading();
    const lock = await waiter;
    expect(lock.held).toBe(true);
    expect(await server.admin().get(`lock:{loading:wait:${name}}`)).not.toBeNull();
    await lock.release();
  });

  it.each(Object.keys(CLIENTS))("%s: a held lock's renewals refused while Redis loads are tried again: the lock is kept once loading ends within its lease", { timeout: 30_000 }, async (name) => {
    const app = await lockApp(name, { ttl: 6_000, renewInterval: 300 });
    const lock = await app.locks.acquire(`loading:renewed:${name}`);
    const rejected = () => rejectedScriptCalls(server.admin());
    const before = await rejected();
    const endLoading = await startLoading();
    // The watchdog's renewal (the only script call now) was refused LOADING, twice at least.
    await expect.poll(rejected, { timeout: 5_000, interval: 50 }).toBeGreaterThan(before + 1);
    expect(await refusesLoading()).toBe(true);
    expect(lock.held).toBe(true);
    const renewed = nextEvent(app.locks.events$, 'renewed', 5_000);
    await endLoading();
    await renewed;
    expect(lock.held).toBe(true);
    expect(await server.admin().pttl(`lock:{loading:renewed:${name}}`)).toBeGreaterThan(3_000);
  });

  it.each(Object.keys(CLIENTS))('%s: a release refused while Redis loads rejects with a RedisLockError and is sent again: the lock is gone once loading ends', { timeout: 30_000 }, async (name) => {
    const app = await lockApp(name, { ttl: 20_000 });
    const lock = await app.locks.acquire(`loading:released:${name}`);
    const endLoading = await startLoading();
    const error = await settle(lock.release());
    expect(await refusesLoading()).toBe(true);
    expect(error).toBeInstanceOf(RedisLockError);
    expect(String(((error as Error).cause as Error | undefined)?.message)).toMatch(LOADING);
    // Failed: 'The release of lock "..." was not answered (LOADING Redis is loading ...); its lease ends on its own in Redis.'
    expect((error as Error).message).toMatch(new RegExp(`^The release of lock "loading:released:${name}": Redis refused it for now \\((?:LOADING|.*BusyLoadingError).*\\); its lease ends on its own in Redis\\.$`));
    expect(lock.held).toBe(false);
    await endLoading();
    // Sent again (after 250 ms, backing off), not left for the rest of its 20 s lease.
    await expect.poll(() => server.admin().exists(`lock:{loading:released:${name}}`), { timeout: 5_000, interval: 100 }).toBe(0);
  });

  it.each(Object.keys(CLIENTS))('%s: a FencedRedis write refused while Redis loads rejects with RedisUnavailableError, nothing written', { timeout: 30_000 }, async (name) => {
    const app = await lockApp(name);
    const handed = await CLIENTS[name]!(server.url());
    onTestFinished(async () => void (await handed.close()));
    const fenced = new FencedRedis(handed.client as never);
    const lock = await app.locks.acquire(`loading:fenced:${name}`);
    onTestFinished(() => lock.release().catch(() => undefined));
    await fenced.set(`wallet:{loading}:${name}`, '100', lock.fencingToken);
    const endLoading = await startLoading();
    const error = await settle(fenced.set(`wallet:{loading}:${name}`, '200', lock.fencingToken));
    expect(await refusesLoading()).toBe(true);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toMatch(/^FencedRedis\.set\(\): Redis refused the write to "wallet:\{loading\}:[\w-]+" for now \((?:LOADING|.*BusyLoadingError).*\), so nothing was written\./);
    await endLoading();
    expect(await fenced.get(`wallet:{loading}:${name}`)).toBe('100');
  });
});

/** Script calls (EVALSHA, EVAL) Redis refused before running them, as INFO commandstats counts them. */
async function rejectedScriptCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  let rejected = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval|evalsha_ro|eval_ro):.*\brejected_calls=(\d+)/gm)) rejected += Number(match[1]);
  return rejected;
}
