import { describe, expect, it } from 'vitest';
import { heldLock, stateOf, tick, unhandledDuring } from '../../holder/release-in-flight/harness.js';

const boom = new Error('boom');

describe('probe: endReleaseAtShutdown', () => {
  it('E1 release() in flight, shutdown, end, late reply', async () => {
    const h = heldLock();
    const out: string[] = [];
    const un = await unhandledDuring(async () => {
      const p = h.lock.release();
      p.then(() => out.push('resolved'), (e: Error) => out.push(`${e.name}`));
      const s = h.lock.shutdown();
      h.state.shuttingDown = true;
      h.lock.endReleaseAtShutdown();
      await tick();
      expect(await stateOf(s)).toBe('resolved');
      h.sent[0]!.resolve({ released: true });
      await tick();
      expect(await h.lock.release().then(() => 'resolved', (e: Error) => e.message)).toBe('resolved');
    });
    expect(out).toEqual(['RedisUnansweredError']);
    expect(un).toEqual([]);
    expect(h.events.map((e) => [e.type, (e as any).unconfirmed])).toEqual([['released', true]]);
    expect(h.unconfirmed.length).toBe(1);
    expect(h.sent.length).toBe(1);
    h.close();
  });

  it('E2 atShutdown give-back joined by release(), ended, late failure quiet', async () => {
    const h = heldLock();
    const un = await unhandledDuring(async () => {
      const s = h.lock.shutdown();
      h.state.shuttingDown = true;
      const p = h.lock.release();
      const q = new Promise<void>((r) => h.lock.releaseThen(r, () => r()));
      h.lock.endReleaseAtShutdown();
      await tick();
      expect(await stateOf(s)).toBe('resolved');
      expect(await stateOf(p)).toBe('resolved');
      expect(await stateOf(q)).toBe('resolved');
      h.given[0]!.reject(boom);
      await tick();
    });
    expect(un).toEqual([]);
    expect(h.unconfirmed.length).toBe(0);
    expect(h.events.map((e) => [e.type, (e as any).reason])).toEqual([['lost', 'shutdown']]);
    h.close();
  });

  it('E3 atShutdown give-back fails before the end: registered once', async () => {
    const h = heldLock();
    const un = await unhandledDuring(async () => {
      const s = h.lock.shutdown();
      h.state.shuttingDown = true;
      h.given[0]!.reject(boom);
      await tick();
      expect(await stateOf(s)).toBe('resolved');
      h.lock.endReleaseAtShutdown();
      expect(await stateOf(h.lock.release())).toBe('resolved');
    });
    expect(un).toEqual([]);
    expect(h.unconfirmed.length).toBe(1);
    h.close();
  });

  it('E4 releaseThen in flight, shutdown, end', async () => {
    const h = heldLock();
    const out: string[] = [];
    const un = await unhandledDuring(async () => {
      h.lock.releaseThen(() => out.push('ok'), () => out.push('failed'));
      const s = h.lock.shutdown();
      h.state.shuttingDown = true;
      h.lock.endReleaseAtShutdown();
      h.lock.endReleaseAtShutdown();
      await tick();
      expect(await stateOf(s)).toBe('resolved');
      h.sent[0]!.reject(boom);
      await tick();
    });
    expect(out).toEqual(['failed']);
    expect(un).toEqual([]);
    expect(h.events.map((e) => [e.type, (e as any).unconfirmed])).toEqual([['released', true]]);
    expect(h.unconfirmed.length).toBe(1);
    h.close();
  });
});
