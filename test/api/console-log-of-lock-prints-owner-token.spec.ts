import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useBothStores } from '../support/both-stores.js';

/**
 * Found by review (forty-second session). `console.log(lock)` (or `util.inspect`, or a logger that
 * formats objects with it, as Nest's ConsoleLogger does) printed the whole engine behind the lock:
 * its owner token, with which whoever reads the log could release or extend the lock in Redis,
 * and pages of the manager's state. It now prints the lock's summary, as `JSON.stringify()`
 * does: its key (escaped and cut), whether it is held, its fencing token.
 */
describe.each(useBothStores())('util.inspect() of a lock ($label)', (backend) => {
  const owner = (lock: object): string => (lock as { token?: string }).token ?? '';

  it('prints its key, held and fencing token, never its owner token', async () => {
    const app = await backend.open();
    const lock = await app.locks.acquire('inspect:order:1');
    const printed = inspect({ lock }, { depth: 10 });
    expect(owner(lock).length).toBeGreaterThan(0);
    expect(printed).not.toContain(owner(lock));
    expect(printed).toContain("key: 'inspect:order:1'");
    expect(printed).toContain(`fencingToken: ${lock.fencingToken}`);
    await lock.release();
    expect(inspect(lock)).toContain('held: false');
  });

  it('of a multi-key, an unfenced current() and a nested handle, never the owner token', async () => {
    const app = await backend.open();
    const multi = await app.locks.acquire(['inspect:b', 'inspect:a']);
    expect(inspect(multi, { depth: 10 })).not.toMatch(/[0-9a-f]{32}\./);
    expect(inspect(multi)).toContain("'inspect:a'");
    await multi.release();
    await app.locks.using(
      'inspect:nested',
      async (outer) => {
        const nested = await app.locks.acquire('inspect:nested', { fencing: false });
        for (const shown of [inspect(app.locks.current(), { depth: 10 }), inspect(nested, { depth: 10 })]) {
          expect(shown).not.toContain(owner(outer));
          expect(shown).toContain("key: 'inspect:nested'");
        }
        await nested.release();
      },
      { fencing: false },
    );
  });
});
