import { describe, expect, it } from 'vitest';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (forty-second session). `JSON.stringify(lock)` of any held lock threw "Converting
 * circular structure to JSON" (the lock refers to its manager, which refers to its locks): an
 * application that logged a lock with a JSON logger (`logger.log({ lock })`, pino's
 * `log.info({ lock })`) crashed the request that did. A lock now serialises as a summary: its key
 * (escaped and cut as every key the library shows), whether it is held, and its fencing token; not
 * its owner token, with which whoever reads the log could release or extend the lock in Redis.
 */
describe.each(useBothStores())('JSON.stringify() of a lock ($label)', (backend) => {
  const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

  it('gives its key, whether it is held and its fencing token, before and after its release', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire('json:order:1');
    expect(json({ lock })).toEqual({ lock: { key: 'json:order:1', held: true, fencingToken: lock.fencingToken } });
    await lock.release();
    expect(json(lock)).toEqual({ key: 'json:order:1', held: false, fencingToken: lock.fencingToken });
  });

  it('leaves the owner token out, and the token a lock taken with fencing: false has not', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire('json:unfenced', { fencing: false });
    const text = JSON.stringify(lock);
    expect(JSON.parse(text)).toEqual({ key: 'json:unfenced', held: true });
    const owner = (lock as unknown as { token: string }).token;
    expect(owner.length).toBeGreaterThan(0);
    expect(text).not.toContain(owner);
    // Through current(), whose view of such a lock throws on its token.
    await app.locks.using('json:current', () => {
      expect(json(app.locks.current())).toEqual({ key: 'json:current', held: true });
    }, { fencing: false });
    await lock.release();
  });

  it('of a multi-key lock gives its keys and their fencing tokens', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire(['json:b', 'json:a']);
    expect(json(lock)).toEqual({ keys: ['json:a', 'json:b'], held: true, fencingTokens: { 'json:a': lock.fencingTokens['json:a'], 'json:b': lock.fencingTokens['json:b'] } });
    await lock.release();
  });

  it('of a multi-key lock of many keys names the first three (a "__proto__" among them) and counts the rest', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire(['json:e', 'json:d', 'json:c', 'json:b', '__proto__']);
    const shown = json(lock) as { keys: string[]; moreKeys: number; fencingTokens: Record<string, number> };
    expect({ keys: shown.keys, moreKeys: shown.moreKeys }).toEqual({ keys: ['__proto__', 'json:b', 'json:c'], moreKeys: 2 });
    expect(Object.entries(shown.fencingTokens)).toEqual(['__proto__', 'json:b', 'json:c'].map((key) => [key, lock.fencingTokens[key]]));
    await lock.release();
  });

  it('of a nested (reentrant) handle gives the lock it shares', async () => {
    const app = await backend.open();
    await app.locks.using('json:nested', async (outer) => {
      const nested = await app.locks.acquire('json:nested');
      expect(json(nested)).toEqual({ key: 'json:nested', held: true, fencingToken: outer.fencingToken });
      await nested.release();
      expect(json(nested)).toEqual({ key: 'json:nested', held: false, fencingToken: outer.fencingToken });
    });
  });

  it('shows a key as logs show keys: escaped and cut', async () => {
    const app = await backend.open();
    const key = `json:\u2028forged line\u202e:${'x'.repeat(300)}`;
    const lock = await app.locks.acquire(key);
    const text = JSON.stringify(lock);
    expect(text).not.toMatch(/[\u2028\u202e]/u);
    const shown = (JSON.parse(text) as { key: string }).key;
    expect(shown.startsWith('json:\\u2028forged line\\u202e:xxx')).toBe(true);
    expect(shown.length).toBeLessThan(220);
    await lock.release();
  });
});
