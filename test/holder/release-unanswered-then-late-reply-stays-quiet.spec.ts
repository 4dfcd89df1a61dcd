/**
 * Review of d4beb2c / 838425d (bounded release): once a release has failed for want of an
 * answer by the end of the lease, the reply that comes later must change nothing: no second
 * settlement, no event, no throw, no unhandled rejection, and the lock must not be tracked
 * again by the deadline sweeper. Also: release() twice, and release() beside releaseThen() (the
 * @Locked path, `releaseShared`), each caller settled exactly once; extend() in flight when
 * the release starts. Replies are held back by a proxy (the commands still run in Redis).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockError, type LockEvent } from '../../lib/index.js';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { TcpProxy } from '../chaos/support/tcp-proxy.js';

interface Internals {
  sweepIndex: number;
  releaseThen(onReleased: () => void, onFailed: (error: unknown) => void): void;
}

describe('a release whose reply comes after the end of the lease', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    proxy?.flushReplies();
    await app?.close();
    await proxy?.close();
    app = undefined;
    proxy = undefined;
  });

  async function start(): Promise<{ app: LockApp; proxy: TcpProxy; events: LockEvent[] }> {
    proxy = await TcpProxy.start(Number(new URL(own.url()).port));
    app = await createLockApp({ redis: proxy.url, ttl: 600 });
    const events: LockEvent[] = [];
    app.locks.events$.subscribe((event) => events.push(event));
    return { app, proxy, events };
  }

  it('settles release() once, and the late reply emits nothing and tracks nothing', async () => {
    const { app, proxy, events } = await start();
    const lock = await app.locks.acquire('late:reply');
    proxy.holdReplies();
    const settlements: string[] = [];
    lock.release().then(
      () => settlements.push('resolved'),
      (error: unknown) => settlements.push(error instanceof RedisLockError ? 'RedisLockError' : String(error)),
    );
    await expect.poll(() => settlements, { timeout: 5_000 }).toEqual(['RedisLockError']);
    // The release ran in Redis all the same.
    await expect.poll(() => own.redis().exists('lock:{late:reply}')).toBe(0);
    expect(events.filter((event) => event.key === 'late:reply').map((event) => event.type)).toEqual(['acquired', 'released']);
    proxy.flushReplies();
    // The late reply is read (a command behind it is answered).
    await app.locks.tryAcquire('late:other').then((other) => other?.release());
    await sleep(300);
    expect(settlements).toEqual(['RedisLockError']);
    expect(events.filter((event) => event.key === 'late:reply').map((event) => event.type)).toEqual(['acquired', 'released']);
    expect(lock.held).toBe(false);
    expect((lock as unknown as Internals).sweepIndex).toBe(-1);
  });

  it('settles release() and releaseThen() once each when the @Locked path shares the release', async () => {
    const { app, proxy } = await start();
    const lock = await app.locks.acquire('late:shared');
    proxy.holdReplies();
    const calls: string[] = [];
    (lock as unknown as Internals).releaseThen(
      () => calls.push('then:released'),
      (error) => calls.push(`then:${(error as Error).constructor.name}`),
    );
    lock.release().then(
      () => calls.push('release:resolved'),
      (error: Error) => calls.push(`release:${error.constructor.name}`),
    );
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(2);
    proxy.flushReplies();
    await app.locks.tryAcquire('late:other').then((other) => other?.release());
    await sleep(300);
    expect(calls.sort()).toEqual(['release:RedisUnansweredError', 'then:RedisUnansweredError']);
  });

  it('settles an extend() in flight and the release that followed it, once each', async () => {
    const { app, proxy, events } = await start();
    const lock = await app.locks.acquire('late:extend');
    proxy.holdReplies();
    const calls: string[] = [];
    lock.extend(900).then(
      () => calls.push('extend:resolved'),
      (error: Error) => calls.push(`extend:${error.constructor.name}`),
    );
    lock.release().then(
      () => calls.push('release:resolved'),
      (error: Error) => calls.push(`release:${error.constructor.name}`),
    );
    // Bounded by the lease while the replies are held (the extension is not answered either).
    await expect.poll(() => calls, { timeout: 5_000 }).toContain('release:RedisUnansweredError');
    proxy.flushReplies();
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(2);
    await app.locks.tryAcquire('late:other').then((other) => other?.release());
    await sleep(300);
    expect(calls).toHaveLength(2);
    expect(events.filter((event) => event.key === 'late:extend').map((event) => event.type)).toEqual(['acquired', 'released']);
    expect((lock as unknown as Internals).sweepIndex).toBe(-1);
  });

  it('a second release() after the unanswered one is bounded too, and settles once', async () => {
    const { app, proxy } = await start();
    const lock = await app.locks.acquire('late:twice');
    proxy.holdReplies();
    const calls: string[] = [];
    lock.release().catch((error: Error) => calls.push(`first:${error.constructor.name}`));
    await expect.poll(() => calls, { timeout: 5_000 }).toEqual(['first:RedisUnansweredError']);
    lock.release().then(
      () => calls.push('second:resolved'),
      (error: Error) => calls.push(`second:${error.constructor.name}`),
    );
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(2);
    proxy.flushReplies();
    await app.locks.tryAcquire('late:other').then((other) => other?.release());
    await sleep(300);
    expect(calls).toEqual(['first:RedisUnansweredError', 'second:RedisUnansweredError']);
    expect((lock as unknown as Internals).sweepIndex).toBe(-1);
  });
});
