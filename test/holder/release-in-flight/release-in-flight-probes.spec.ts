/**
 * Review of 55ff00a (a release in flight is one `ReleaseInFlight`, its promise made lazily):
 * probes of HeldLock's release paths over a stand-in owner on a manual clock, each release's
 * reply settled by hand. These HOLD on the current code and on 55ff00a~1 alike (no behaviour
 * difference found): a `release()` or second `releaseThen()` joining a `releaseThen()` release
 * (success, failure, expiry), `shutdown()` during a release in flight (then joined, then failed
 * or expired), release()/releaseThen()/asyncDispose after shutdown's give-back (even when it
 * fails), a lost lock released at shutdown, a retry after a failed release whose first reply
 * comes late, the `released` event with `unconfirmed: true` exactly once, and no
 * unhandledRejection anywhere. Kept as guards for the rewrite.
 */
import { describe, expect, it } from 'vitest';
import { heldLock, stateOf, tick, unhandledDuring } from './harness.js';

const boom = new Error('boom');

describe('HeldLock release in flight (review of 55ff00a): probes that held', () => {
  it('S1 releaseThen then release() joins, success', async () => {
    const h = heldLock();
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), (e) => out.push(e));
      const p = h.lock.release();
      h.sent[0]!.resolve({ released: true });
      await p;
    });
    expect(out).toEqual(['ok']);
    expect(un).toEqual([]);
    expect(h.events.map((e) => e.type)).toEqual(['released']);
    h.close();
  });

  it('S2 releaseThen then release() joins, failure', async () => {
    const h = heldLock();
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      const p = h.lock.release();
      h.sent[0]!.reject(boom);
      expect(await stateOf(p)).toMatch(/rejected/);
    });
    expect(out).toEqual(['failed']);
    expect(un).toEqual([]);
    expect(h.events.map((e) => [e.type, (e as any).unconfirmed])).toEqual([['released', true]]);
    expect(h.lock.held).toBe(false);
    expect(h.lock.released).toBe(true);
    h.close();
  });

  it('S3 releaseThen expires unanswered; release() after retries; late reply of first quiet', async () => {
    const h = heldLock(3000);
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      await h.clock.advance(5000);
      expect(out).toEqual(['failed']);
      const p = h.lock.release();
      expect(h.sent.length).toBe(2);
      h.sent[0]!.resolve({ released: false });
      await tick();
      expect(await stateOf(p)).toBe('pending');
      h.sent[1]!.resolve({ released: true });
      expect(await stateOf(p)).toBe('resolved');
    });
    expect(un).toEqual([]);
    expect(h.events.map((e) => [e.type, (e as any).unconfirmed])).toEqual([['released', true]]);
    h.close();
  });

  it('S4 shutdown during releaseThen in flight, failure', async () => {
    const h = heldLock();
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      h.state.shuttingDown = true;
      const s = h.lock.shutdown();
      h.sent[0]!.reject(boom);
      expect(await stateOf(s)).toBe('resolved');
    });
    expect(un).toEqual([]);
    expect(out).toEqual(['failed']);
    expect(h.unconfirmed.length).toBe(1);
    h.close();
  });

  it('S5 shutdown during releaseThen, then release() joins, then expire', async () => {
    const h = heldLock(3000);
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      const s = h.lock.shutdown();
      const p = h.lock.release();
      await h.clock.advance(5000);
      expect(await stateOf(s)).toBe('resolved');
      expect(await stateOf(p)).toMatch(/rejected/);
    });
    expect(un).toEqual([]);
    h.close();
  });

  it('S6 release() in flight, shutdown, success', async () => {
    const h = heldLock();
    const un = await unhandledDuring(async () => {
      const p = h.lock.release();
      const s = h.lock.shutdown();
      h.sent[0]!.resolve({ released: true });
      expect(await stateOf(p)).toBe('resolved');
      expect(await stateOf(s)).toBe('resolved');
      expect(h.lock.held).toBe(false);
    });
    expect(un).toEqual([]);
    h.close();
  });

  it('S7 shutdown then release() and releaseThen and asyncDispose', async () => {
    const h = heldLock();
    h.state.shuttingDown = true;
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      const s = h.lock.shutdown();
      const p = h.lock.release();
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      const d = h.lock[Symbol.asyncDispose]();
      h.given[0]!.reject(boom);
      expect(await stateOf(s)).toBe('resolved');
      expect(await stateOf(p)).toBe('resolved');
      expect(await stateOf(d)).toBe('resolved');
    });
    expect(out).toEqual(['ok']);
    expect(un).toEqual([]);
    expect(h.sent.length).toBe(0);
    h.close();
  });

  it('S8 lost lock released at shutdown', async () => {
    const h = heldLock(3000);
    await h.clock.advance(5000);
    expect(h.lock.held).toBe(false);
    h.state.shuttingDown = true;
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      const p = h.lock.release();
      expect(await stateOf(p)).toBe('resolved');
      expect(await stateOf(h.lock.shutdown())).toBe('resolved');
    });
    expect(out).toEqual(['ok']);
    expect(un).toEqual([]);
    h.close();
  });

  it('S9 release() on frozen redis expires; rejects; released once unconfirmed; late reply quiet', async () => {
    const h = heldLock(3000);
    const un = await unhandledDuring(async () => {
      const p = h.lock.release();
      p.catch(() => undefined);
      await h.clock.advance(5000);
      expect(await stateOf(p)).toMatch(/rejected/);
      h.sent[0]!.resolve({ released: true });
      await tick();
    });
    expect(un).toEqual([]);
    expect(h.events.map((e) => [e.type, (e as any).unconfirmed])).toEqual([['released', true]]);
    h.close();
  });

  it('S10 retry after failure: second release() fails too, then releaseThen', async () => {
    const h = heldLock(3000);
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      h.sent[0]!.reject(boom);
      await tick();
      h.lock.releaseThen(() => out.push('ok2'), () => out.push('failed2'));
      h.sent[1]!.reject(boom);
      await tick();
      const p = h.lock.release();
      h.sent[2]!.resolve({ released: true });
      await p;
    });
    expect(out).toEqual(['failed', 'failed2']);
    expect(un).toEqual([]);
    h.close();
  });

  it('S11 lost lock (expired) then release() joined by releaseThen; fails; shared', async () => {
    const h = heldLock(3000);
    await h.clock.advance(5000);
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      const p = h.lock.release();
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      h.sent[0]!.reject(boom);
      expect(await stateOf(p)).toMatch(/rejected/);
    });
    expect(out).toEqual(['failed']);
    expect(un).toEqual([]);
    h.close();
  });

  it('S12 release() twice concurrently fails, both reject, second handled', async () => {
    const h = heldLock(3000);
    const un = await unhandledDuring(async () => {
      const p1 = h.lock.release();
      const p2 = h.lock.release();
      h.sent[0]!.reject(boom);
      expect(await stateOf(p1)).toMatch(/rejected/);
      expect(await stateOf(p2)).toMatch(/rejected/);
    });
    expect(un).toEqual([]);
    h.close();
  });

  it('S13 releaseThen; another releaseThen joins; fails', async () => {
    const h = heldLock(3000);
    const out: unknown[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      h.lock.releaseThen(() => out.push('ok2'), () => out.push('failed2'));
      h.sent[0]!.reject(boom);
      await tick();
    });
    expect(out).toEqual(['failed', 'failed2']);
    expect(un).toEqual([]);
    h.close();
  });

  it('S14 a refused release (lost) whose abort listener calls release() at once', async () => {
    const h = heldLock(3000);
    const out: unknown[] = [];
    const joined: Promise<string>[] = [];
    h.lock.signal.addEventListener('abort', () => joined.push(h.lock.release().then(() => 'resolved', () => 'rejected')));
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      h.sent[0]!.resolve({ released: false });
      await tick();
      expect(await Promise.all(joined)).toEqual(['resolved']);
    });
    expect(out).toEqual(['ok']);
    expect(h.sent.length).toBe(1);
    expect(h.events.map((e) => [e.type, (e as any).reason])).toEqual([['lost', 'refused']]);
    expect(un).toEqual([]);
    h.close();
  });
});
