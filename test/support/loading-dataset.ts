import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect, onTestFinished } from 'vitest';

/**
 * A redis-server kept answering LOADING for as long as a test wants: `DEBUG RELOAD` of a few
 * thousand 1 KB keys, each load slowed by `key-load-delay` (a debug setting, 10 ms a key) with
 * events served between keys (`loading-process-events-interval-bytes` 1024), so that Redis
 * answers LOADING until the test sets the delay back to 0 (CONFIG is served while loading). A raw
 * client is seen refused LOADING before and after a call a test asserts on, so that the call met
 * that refusal, whatever the machine's speed.
 */

/** The refusal as ioredis and node-redis give it, and as Valkey GLIDE names it. */
export const LOADING = /^LOADING\b|BusyLoadingError/;
/** The refusal's text, as quoted in the library's messages. */
export const LOADING_TEXT = /LOADING Redis is loading the dataset in memory|BusyLoadingError/;

/** The arguments of a redis-server that can be kept loading, its RDB in a directory of its own. */
export function loadingServerArgs(): { args: string[]; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'redis-loading-'));
  return {
    args: ['--dir', dir, '--enable-debug-command', 'local', '--loading-process-events-interval-bytes', '1024'],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface DatasetLoading {
  /** Whether Redis refuses a plain read LOADING right now. */
  refusesLoading(): Promise<boolean>;
  /** Starts a reload that lasts until the returned function ends it (and awaits its end); ended after the test anyway. */
  start(): Promise<() => Promise<void>>;
  /** Ends any reload and closes the clients. */
  close(): Promise<void>;
}

/**
 * Fills the server at `url` (started with `loadingServerArgs()`) with `keys` keys of 1 KB, loaded
 * `delayUs` microseconds a key (at 10 ms a key, 2,000 make 20 s of loading at most, ended by the
 * test at once) and opens the clients that reload it, probe it and end the reload. Redis serves
 * its clients every thirty keys or so while loading, so a delay of 10 ms answers in about 300 ms:
 * a quorum's masters, whose round waits 300 ms, are given 1 ms a key (20,000 keys).
 */
export async function datasetLoading(url: string, { keys = 2_000, delayUs = 10_000 }: { keys?: number; delayUs?: number } = {}): Promise<DatasetLoading> {
  const admin = new Redis(url);
  const reloader = new Redis(url);
  const probe = new Redis(url);
  for (const client of [admin, reloader, probe]) client.on('error', () => undefined);
  await admin.eval(`for i = 1, ${keys} do redis.call('SET', 'fill:' .. i, string.rep('x', 1024)) end return 1`, 0);
  const refusesLoading = (): Promise<boolean> =>
    probe.get('fill:1').then(
      () => false,
      (error: Error) => LOADING.test(error.message),
    );
  return {
    refusesLoading,
    async start() {
      await admin.config('SET', 'key-load-delay', String(delayUs));
      const reload = reloader.call('DEBUG', 'RELOAD');
      await expect.poll(refusesLoading, { timeout: 5_000, interval: 20 }).toBe(true);
      let ended = false;
      const end = async (): Promise<void> => {
        if (ended) return;
        ended = true;
        await admin.config('SET', 'key-load-delay', '0');
        await reload;
      };
      onTestFinished(end);
      return end;
    },
    async close() {
      await admin.config('SET', 'key-load-delay', '0').catch(() => undefined);
      for (const client of [admin, reloader, probe]) client.disconnect();
    },
  };
}
