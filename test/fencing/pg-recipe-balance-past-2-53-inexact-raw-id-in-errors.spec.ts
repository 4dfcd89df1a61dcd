import { Test, type TestingModule } from '@nestjs/testing';
import { LockService, RedisLockModule } from 'nestjs-redis-lock';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deposit, loadBalance, saveBalance, transfer } from './recipes/pg-accounts.js';
import { usePostgresPool } from '../support/postgres-pool.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (fencing), follow-up: the `pg` recipe of docs/fencing.md read the bigint balance with
 * `Number(...)`: past 2^53 a balance is not exact as a number, so a deposit wrote back a rounded
 * sum (2^53 + 1, plus 2, written as 2^53 + 2), money lost without a word. The TypeORM recipe reads
 * it as a BigInt; this one now does too. And its errors put the account id in raw and whole: an id
 * from a request with a newline forged a log line, a long one flooded it. They now show it cut
 * and quoted by JSON.stringify (the library's own quoting helper is internal to it).
 */
describe('the pg recipe of docs/fencing.md', () => {
  useRedis();
  const postgres = usePostgresPool();
  let pool: pg.Pool;
  let moduleRef: TestingModule;
  beforeAll(async () => {
    pool = postgres.pool;
    moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })] }).compile();
    await moduleRef.init();
  });
  afterAll(() => moduleRef?.close());
  beforeEach(async () => {
    await pool.query('DROP TABLE IF EXISTS accounts');
    await pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
  });

  const balanceOf = async (id: string) => (await pool.query<{ balance: string }>('SELECT balance FROM accounts WHERE id = $1', [id])).rows[0]!.balance;

  it('deposits exactly to a balance past 2^53, as the TypeORM recipe does', async () => {
    await pool.query("INSERT INTO accounts (id, balance) VALUES ('a', 9007199254740993)"); // 2^53 + 1
    await deposit(moduleRef.get(LockService), pool, 'a', 2);
    expect(await balanceOf('a')).toBe('9007199254740995');
    expect(await loadBalance(pool, 'a', Number.MAX_SAFE_INTEGER)).toBe(9007199254740995n);
  });

  it('transfers exactly between balances past 2^53', async () => {
    await pool.query("INSERT INTO accounts (id, balance) VALUES ('a', 9007199254740993), ('b', 9007199254740993)");
    await transfer(pool, 'a', 'b', 1, { 'account:a': 1, 'account:b': 1 });
    expect([await balanceOf('a'), await balanceOf('b')]).toEqual(['9007199254740992', '9007199254740994']);
    await saveBalance(pool, 'a', 2n ** 62n, 1);
    expect(await balanceOf('a')).toBe('4611686018427387904');
  });

  const forged = `x\n${'[WARN] forged log line '.repeat(100)}`;
  it.each([
    ['loadBalance, no such account', () => loadBalance(pool, forged, 1), /^No account "x\\n\[WARN\] forged/],
    ['saveBalance, no such account', () => saveBalance(pool, forged, 1n, 1), /^No account "x\\n\[WARN\] forged/],
    ['transfer to itself', () => transfer(pool, forged, forged, 1, {}), /^A transfer needs two accounts, got "x\\n\[WARN\] forged/],
  ] as const)('%s: the error shows the account id quoted, escaped and cut', async (_name, call, shape) => {
    const error = await call().then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    expect(error?.message).toMatch(shape);
    expect(error?.message).not.toContain('\n');
    expect(error!.message.length).toBeLessThan(300);
  });
});
