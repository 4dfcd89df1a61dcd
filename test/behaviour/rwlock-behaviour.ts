import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockLostError, LockUpgradeError, UnsupportedLockKindError, type Lock } from '../../lib/index.js';
import { nextEvent, sleep } from '../support/lock-app.js';
import { useBackend, type LockBackend } from './lock-behaviour.js';

/** Read-write locks (`mode`), through the public API, on every backend. */
export function describeReadWriteBehaviour(label: string, backend: LockBackend): void {
  describe(`read-write behaviour: ${label}`, () => {
    const { open, key } = useBackend(backend, 'rw');

    if (!backend.queues) {
      it('refuses a read lock at call time with an error saying it is not supported', async () => {
        const { locks } = await open();
        await expect(locks.acquire(key('quorum'), { mode: 'read' })).rejects.toThrow(UnsupportedLockKindError);
        await expect(locks.tryAcquire(key('quorum'), { mode: 'read' })).rejects.toThrow(/not supported in quorum mode/);
        // The write side is the plain lock, which works.
        const lock = await locks.acquire(key('quorum'), { mode: 'write' });
        await lock.release();
      });
      return;
    }

    /** Starts an acquire on its own instance and resolves once it waits in the queue. */
    // Wrapped: an async function returning the pending acquire would wait for it.
    const queued = async (k: string, mode: 'read' | 'write'): Promise<{ lock: Promise<Lock> }> => {
      const app = await open();
      const waiting = nextEvent(app.locks.events$, 'waiting', 10_000);
      const lock = app.locks.acquire(k, { mode, waitTimeout: 20_000 });
      lock.catch(() => undefined);
      await waiting;
      return { lock };
    };

    it('hands a reader a higher fencing token than before its counter was lost', async () => {
      const { locks } = await open();
      const k = key('counter-lost');
      const writer = await locks.acquire(k, { mode: 'write' });
      await writer.release();
      await sleep(10);
      await backend.forgetFence(k);
      const reader = await locks.acquire(k, { mode: 'read' });
      expect(reader.fencingToken).toBeGreaterThan(writer.fencingToken);
      await reader.release();
    });

    it('lets readers share the lock and keeps writers out while they hold it', async () => {
      const a = await open();
      const b = await open();
      const k = key('share');
      const r1 = await a.locks.acquire(k, { mode: 'read' });
      const r2 = await b.locks.acquire(k, { mode: 'read', waitTimeout: 0 });
      expect(r1.held && r2.held).toBe(true);
      expect(r2.fencingToken).toBeGreaterThan(r1.fencingToken);
      expect(await a.locks.isLocked(k)).toBe(true);
      // inspect() reads a key held by readers as held (with plain reads on Redis).
      expect(await a.locks.inspect(k)).toMatchObject({ key: k, held: true });
      expect(await b.locks.tryAcquire(k)).toBeNull();
      expect(await b.locks.tryAcquire(k, { mode: 'write' })).toBeNull();
      const { lock: writer } = await queued(k, 'write');
      await r1.release();
      await sleep(100);
      await r2.release();
      const w = await writer;
      expect(w.fencingToken).toBeGreaterThan(r2.fencingToken);
      expect(await a.locks.tryAcquire(k, { mode: 'read' })).toBeNull();
      await w.release();
      expect(await a.locks.isLocked(k)).toBe(false);
    });

    it('queues a reader that arrives after a waiting writer behind it, and lets the readers behind the writer in together', async () => {
      const a = await open();
      const k = key('fifo');
      const r1 = await a.locks.acquire(k, { mode: 'read' });
      const { lock: writer } = await queued(k, 'write');
      // Readers hold the lock, but a writer waits: a new reader does not get in.
      expect(await a.locks.tryAcquire(k, { mode: 'read' })).toBeNull();
      const { lock: r2 } = await queued(k, 'read');
      const { lock: r3 } = await queued(k, 'read');
      let readersIn = 0;
      void r2.then(() => readersIn++, () => undefined);
      void r3.then(() => readersIn++, () => undefined);
      await r1.release();
      const w = await writer;
      await sleep(200);
      expect(readersIn).toBe(0);
      await w.release();
      const [l2, l3] = await Promise.all([r2, r3]);
      expect(l2.held && l3.held).toBe(true);
      expect(Math.min(l2.fencingToken, l3.fencingToken)).toBeGreaterThan(w.fencingToken);
      await Promise.all([l2.release(), l3.release()]);
    });

    it('lets a write holder take the read lock in its chain, and refuses an upgrade', async () => {
      const { locks } = await open();
      const k = key('reentrant');
      const tokens = await locks.using(k, async (outer) => locks.using(k, async (inner) => [outer.fencingToken, inner.fencingToken], { mode: 'read', waitTimeout: 0 }));
      expect(tokens[0]).toBe(tokens[1]);
      await locks.using(
        k,
        async () => {
          await expect(locks.acquire(k)).rejects.toThrow(LockUpgradeError);
          await expect(locks.using(k, () => 1, { mode: 'write' })).rejects.toThrow(/holds its read lock/);
          const nested = await locks.acquire(k, { mode: 'read', waitTimeout: 0 });
          await nested.release();
        },
        { mode: 'read' },
      );
      expect(await locks.isLocked(k)).toBe(false);
    });

    it('lets a writer in once a crashed reader lease runs out', async () => {
      const a = await open();
      const b = await open();
      const k = key('crashed');
      const stale = await a.locks.acquire(k, { mode: 'read', ttl: 400, autoRenew: false });
      const writer = await b.locks.acquire(k, { waitTimeout: 10_000 });
      expect(writer.fencingToken).toBeGreaterThan(stale.fencingToken);
      // Told by reading `held`: the signal aborts on the deadline sweeper's timer, and a loaded
      // machine ran the acquire's reply first (docs/locks.md, `signal`).
      expect(stale.held).toBe(false);
      expect(stale.signal.aborted).toBe(true);
      expect(stale.signal.reason).toBeInstanceOf(LockLostError);
      await writer.release();
    });

    it('renews each reader with the watchdog', async () => {
      const { locks } = await open();
      const k = key('renew');
      // A 1.2 s lease renewed every 400 ms survives a loaded machine's stalls; 300 ms did not.
      const reader = await locks.acquire(k, { mode: 'read', ttl: 1_200 });
      await sleep(1_500);
      expect(reader.held).toBe(true);
      expect(await locks.tryAcquire(k)).toBeNull();
      await reader.release();
      const writer = await locks.tryAcquire(k);
      expect(writer).not.toBeNull();
      await writer!.release();
    });

    it('passes on what a waiting reader that gave up was owed', async () => {
      const a = await open();
      const k = key('leave');
      const w1 = await a.locks.acquire(k);
      const controller = new AbortController();
      const b = await open();
      const waiting = nextEvent(b.locks.events$, 'waiting', 10_000);
      const gaveUp = b.locks.acquire(k, { mode: 'read', waitTimeout: 20_000, signal: controller.signal }).catch((e: unknown) => e);
      await waiting;
      const { lock: next } = await queued(k, 'write');
      controller.abort(new Error('gave up'));
      expect(((await gaveUp) as Error).message).toBe('gave up');
      await w1.release();
      const w2 = await next;
      expect(w2.held).toBe(true);
      await w2.release();
    });

    it('names the option in errors for a bad mode', async () => {
      const { locks } = await open();
      await expect(locks.acquire(key('bad'), { mode: 'exclusive' as 'read' })).rejects.toThrow(InvalidLockOptionsError);
      await expect(locks.acquire(key('bad'), { mode: 'read', limit: 2 })).rejects.toThrow(/"mode"/);
    });
  });
}
