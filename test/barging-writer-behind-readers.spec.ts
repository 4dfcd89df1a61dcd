import { describe, expect, it } from 'vitest';
import type { Lock } from '../lib/index.js';
import { sleep } from './support/lock-app.js';
import { uniqueKey, useBothStores } from './support/both-stores.js';

/**
 * Found by review. docs/lock-family.md (read-write locks): "A reader that arrives while a writer waits queues
 * behind it, even when readers hold the lock, so a stream of readers cannot starve a writer".
 * docs/locks.md (barging): "Nobody starves. A barging waiter that lost 2 races asks like a FIFO
 * waiter". The write side of a read-write lock is the plain mutex, and `fairness: 'barging'`
 * (per call, or the module default) applies to it. But a barging writer never queues until it
 * lost races, and it only raced on a "lock freed" message, which overlapping readers never
 * send: it polled '~r' forever, and readers kept being let in beside nobody-in-the-queue. Now a
 * poll that finds the lock busy counts as a lost race: after two, the writer queues, and the
 * readers that arrive from then on queue behind it.
 */
describe('a barging writer behind a steady stream of overlapping readers', () => {
  for (const backend of useBothStores()) {
    it(`gets the lock within its waitTimeout (${backend.label})`, async () => {
      const readers = await backend.open();
      const writers = await backend.open({ fairness: 'barging' });
      const key = uniqueKey('rw-barging');
      let stop = false;
      const held: Promise<void>[] = [];
      // Each reader holds 200 ms; a new one starts every 50 ms: the lock is never without readers.
      const readerLoop = (async () => {
        while (!stop) {
          held.push(
            readers.locks
              .acquire(key, { mode: 'read', waitTimeout: 10_000 })
              .then(async (lock: Lock) => {
                await sleep(200);
                await lock.release();
              })
              .catch(() => undefined),
          );
          await sleep(50);
        }
      })();
      await sleep(300);
      const startedAt = Date.now();
      const outcome = await writers.locks
        .acquire(key, { waitTimeout: 10_000 })
        .then(async (lock) => {
          await lock.release();
          return `acquired after ${Date.now() - startedAt} ms`;
        })
        .catch((error: Error) => `${error.name} after ${Date.now() - startedAt} ms`);
      stop = true;
      await readerLoop;
      await Promise.all(held);
      expect(outcome).toMatch(/^acquired/);
    }, 30_000);
  }
});
