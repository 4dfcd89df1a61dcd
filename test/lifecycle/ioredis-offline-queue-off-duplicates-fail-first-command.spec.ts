import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { subscribers } from '../support/redis.js';
import { useReplicatedServer } from '../support/replicated-server.js';

/**
 * Found by review (drivers). An ioredis client handed in with `enableOfflineQueue: false` (a common
 * fail-fast setting) is taken as it is (docs/configuration.md: "used as it is"). The module opens
 * connections of its own from it with `duplicate()`, which copies that option: the release
 * subscriber (ioredis-driver.ts `subscriber()`) and the `waitForReplicas` connection
 * (replica-wait.ts). Each is a fresh connection that is still connecting when the module sends
 * its first command on it, and ioredis refuses a command on a connection that is not ready when
 * the offline queue is off ("Stream isn't writeable and enableOfflineQueue options is false").
 * So the first waiter of every process has its SUBSCRIBE refused (a WARN, and waiters poll until
 * the retry), and with `waitForReplicas` the first acquisition of every process fails: at once
 * for a `tryAcquire` (`waitTimeout: 0`).
 */
describe('ioredis client handed in with enableOfflineQueue: false', () => {
  const servers = useReplicatedServer();
  let client: Redis | undefined;
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    client?.disconnect();
    app = client = undefined;
  });

  async function open(): Promise<Redis> {
    const opened = new Redis(servers.master.url, { enableOfflineQueue: false });
    opened.on('error', () => undefined);
    await new Promise((resolve) => opened.once('ready', resolve));
    return opened;
  }

  it('subscribes the first waiter of the process at once (no refused SUBSCRIBE)', { timeout: 20_000 }, async () => {
    client = await open();
    app = await createLockApp({ redis: client });
    const held = await app.locks.acquire('offline-queue:sub');
    const waiting = app.locks.acquire('offline-queue:sub', { waitTimeout: 10_000 });
    await expect.poll(() => subscribers(client!, 'lock:{offline-queue:sub}:released'), { timeout: 5_000 }).toBe(1);
    await held.release();
    await (await waiting).release();
    expect(app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([]);
  });

  it('with waitForReplicas, takes a free lock on the first tryAcquire of the process', { timeout: 20_000 }, async () => {
    client = await open();
    app = await createLockApp({ redis: client, waitForReplicas: { replicas: 1, timeout: 1_000 } });
    const first = await app.locks.tryAcquire('offline-queue:replicas').then(
      (lock) => (lock === null ? 'busy' : (void lock.release(), 'acquired')),
      (error: Error) => `${error.name}: ${error.message}`,
    );
    expect(first).toBe('acquired');
  });
});
