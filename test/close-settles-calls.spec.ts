import { afterEach, describe, expect, it } from 'vitest';
import { FaultProxy } from '../explore/real/fault-proxy.mjs';
import { createLockApp, sleep } from './support/lock-app.js';
import { redisUrl } from './support/redis.js';

// Found by the real-Redis explorer (seed 790573: a semaphore worker whose release was on its way
// when its connection was reset, Redis out of reach until it closed): the release never settled,
// so the `using()` call and the worker's shutdown hung for ever. ioredis keeps a command it had
// sent when a ready connection closed in a queue of its own, to resend once the connection is
// ready again, and a `disconnect()` before then rejects the other queues but not that one.
describe('app.close() settles every call of a connection of its own', () => {
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    proxy?.heal();
    await proxy?.close();
    proxy = undefined;
  });

  it('a release sent before the connection was reset, Redis out of reach since, settles once the application closed', async () => {
    proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
    const url = new URL(redisUrl());
    url.port = String(proxy.port);
    const app = await createLockApp({ redis: url.toString(), ttl: 60_000, shutdownTimeout: 300 });
    const lock = await app.locks.acquire('cut-release', { limit: 2 });
    proxy.cut();
    const released = lock.release().then(
      () => 'released',
      (error: unknown) => `rejected: ${(error as Error).message}`,
    );
    // Written to the socket, held by the partition; then the connection drops and ioredis
    // reconnects into the same partition.
    await sleep(100);
    proxy.reset();
    await sleep(300);
    await app.close();
    const outcome = await Promise.race([released, sleep(10_000).then(() => 'still pending 10 s after close')]);
    expect(outcome).toMatch(/^rejected: /);
  });
});
