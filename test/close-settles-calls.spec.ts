import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultProxy } from '../explore/real/fault-proxy.mjs';
import { createLockApp, nextEvent, sleep } from './support/lock-app.js';
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

  // Found by a full run (test/family/rwlock-local-wake.spec.ts: the subscriber connections killed,
  // then app.close()): ioredis subscribes a reconnected subscriber connection to its channels
  // again with a promise nobody handles, and a disconnect() before Redis answered rejects it: an
  // unhandled rejection, which ends a Node process by default.
  it('closing while the release subscriber subscribes again after a reconnection leaves no unhandled rejection', async () => {
    proxy = await FaultProxy.start(Number(new URL(redisUrl()).port));
    const url = new URL(redisUrl());
    url.port = String(proxy.port);
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const app = await createLockApp({ redis: url.toString(), ttl: 60_000, shutdownTimeout: 300 });
      const holder = await app.locks.acquire('resubscribe');
      // A waiter: the release subscriber is subscribed to the key's channel.
      const waiting = nextEvent(app.locks.events$, 'waiting');
      const waiter = app.locks.acquire('resubscribe', { waitTimeout: 30_000 }).catch((error: unknown) => error);
      await waiting;
      await sleep(100); // the SUBSCRIBE answered
      // Every connection dropped, and everything the new ones send or receive is delayed: once
      // Redis counts a subscriber again, ioredis' SUBSCRIBE has reached it and its answer is on
      // its way back, and the application closes then.
      proxy.delay(500);
      proxy.reset();
      const admin = new Redis(redisUrl());
      try {
        while (!String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).includes('sub=1')) await sleep(10);
      } finally {
        admin.disconnect();
      }
      await app.close();
      await waiter;
      void holder;
      await sleep(200); // the connections' close events, and the rejections they bring
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
