import { afterEach, expect } from 'vitest';
import { useOwnRedis } from './redis.js';

interface Closable {
  close(): Promise<unknown>;
}

/**
 * The set-up of the frozen-Redis specs: a redis-server of the file's own (see `useOwnRedis`),
 * which a test freezes with `server().pause()` (SIGSTOP: a network cut that resets nothing, a
 * server stuck in a long command look the same), and the applications the test opened. After
 * each test Redis resumes, then every application `opened()` closes (an error of that close is
 * ignored: the test may have closed it already).
 */
export function useFrozenRedis(): ReturnType<typeof useOwnRedis> & { opened<T extends Closable>(app: T): T } {
  const own = useOwnRedis();
  const apps: Closable[] = [];
  afterEach(async () => {
    own.server().resume();
    await Promise.all(apps.splice(0).map((app) => app.close().catch(() => undefined)));
  });
  return {
    ...own,
    opened: (app) => {
      apps.push(app);
      return app;
    },
  };
}

/**
 * Calls `app.close()` and waits until it has ended, failing the test if it is still pending after
 * `ms` (a bound far above the `shutdownTimeout` the test gave: it proves the close ends, not how
 * fast). Resolves with how long the close took.
 */
export async function closesWithin(app: Closable, ms: number): Promise<number> {
  const startedAt = performance.now();
  const closed: { after?: number } = {};
  void app.close().then(() => (closed.after = Math.round(performance.now() - startedAt)));
  await expect.poll(() => closed.after ?? 'app.close() still pending', { timeout: ms, interval: 100 }).toBeTypeOf('number');
  return closed.after!;
}
