import { describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (fencing): `hset(key, fields, fencingToken)` took its fields as a
 * `Readonly<Record<string, FencedValue>>`, which an interface (no index signature) does not
 * satisfy: fields typed by an application's interface needed a cast (test/types/fencing-api.ts).
 * It now takes them by their type. A class instance (a DTO made by class-transformer), which the
 * same type now lets through, stays refused at run time, as before (getters of its class would not
 * be written), and the refusal says what to pass instead: its fields, spread.
 */
describe('FencedRedis.hset with fields typed by an interface, or a class instance', () => {
  const redis = useRedis();

  interface WalletFields {
    balance: number;
    by: string;
  }
  class WalletDto implements WalletFields {
    balance = 120;
    by = 'api-2';
  }

  it.each([
    ['Redis', () => new FencedRedis(redis)],
    ['memory', () => new FencedRedis(new InMemoryLocks())],
  ] as const)('on %s: writes an interface-typed object; refuses a class instance saying to spread it, writing nothing', async (_name, open) => {
    const fenced = open();
    const fields: WalletFields = { balance: 100, by: 'api-1' };
    await fenced.hset('wallet:{7}', fields, 5);
    expect(await fenced.hget('wallet:{7}', 'balance')).toBe('100');

    const refused = await fenced.hset('wallet:{7}', new WalletDto(), 6).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refused).toBeInstanceOf(TypeError);
    expect(refused!.message).toBe(
      'FencedRedis.hset(): Argument "field" must be a field name (a string), or "fields" an object of fields, got a WalletDto (pass its fields as a plain object: { ...value }).',
    );
    expect(await fenced.fence('wallet:{7}')).toBe(5);

    await fenced.hset('wallet:{7}', { ...new WalletDto() }, 6);
    expect(await fenced.hget('wallet:{7}', 'balance')).toBe('120');
  });
});
