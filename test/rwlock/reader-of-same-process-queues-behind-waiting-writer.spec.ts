import { describe, expect, it } from 'vitest';
import { useBothStores } from '../support/both-stores.js';

/**
 * docs/lock-family.md (read-write locks): "A reader that arrives while a writer waits queues
 * behind it, even when readers hold the lock, so a stream of readers cannot starve a writer."
 * Held here with every caller in one process, on both stores: a review of the forty-second session
 * saw a third reader of the writer's own process get in at once; this spec did not show it (the
 * writer had most likely not queued yet there).
 */
describe.each(useBothStores())('a read lock asked for while a writer of the same process waits ($label)', (backend) => {
  it('waits behind the writer, even with readers holding', async () => {
    const app = await backend.open();
    const readers = [await app.locks.acquire('rw:same', { mode: 'read' }), await app.locks.acquire('rw:same', { mode: 'read' })];
    const order: string[] = [];
    const writer = app.locks.acquire('rw:same', { waitTimeout: 10_000 }).then((lock) => {
      order.push('writer');
      return lock;
    });
    // The writer has queued: the store reports a waiter.
    await expect.poll(async () => (await app.locks.inspect('rw:same')).waiters, { timeout: 5_000 }).toBeGreaterThan(0);
    expect(await app.locks.tryAcquire('rw:same', { mode: 'read' })).toBeNull();
    const third = app.locks.acquire('rw:same', { mode: 'read', waitTimeout: 10_000 }).then((lock) => {
      order.push('reader');
      return lock;
    });
    for (const reader of readers) await reader.release();
    const written = await writer;
    expect(order).toEqual(['writer']);
    await written.release();
    await (await third).release();
    expect(order).toEqual(['writer', 'reader']);
  });
});
