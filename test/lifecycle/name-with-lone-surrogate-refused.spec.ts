import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';

/**
 * Found by review (a suspicion, proven here): the `name` option, which becomes the `lock.name`
 * metric attribute, was accepted with a lone surrogate (half an emoji), which an OTLP exporter
 * replaces with U+FFFD or refuses, while keys with one are refused. It is refused too, before
 * anything is asked of Redis.
 */
describe('the name option with a lone surrogate', () => {
  for (const backend of useBothStores()) {
    it(`is refused with InvalidLockOptionsError naming "name", and nothing is left (${backend.label})`, async () => {
      const app = await backend.open();
      const key = uniqueKey('lone-name');
      for (const name of ['orders\uD83D', '\uDE00orders']) {
        const refused = await app.locks.acquire(key, { name }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused).toBeInstanceOf(InvalidLockOptionsError);
        expect((refused as InvalidLockOptionsError).option).toBe('name');
      }
      expect(await app.locks.isLocked(key)).toBe(false);
      const lock = await app.locks.acquire(key, { name: 'orders 😀' });
      await lock.release();
    });
  }
});
