import pg from 'pg';
import type { Repository } from 'typeorm';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadBalance, saveBalance } from './recipes/pg-accounts.js';
import { Account, AccountsService } from './recipes/typeorm-accounts.js';
import { useTypeormAccounts } from './recipes/typeorm-accounts-module.js';
import { usePostgresPool } from '../support/postgres-pool.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (fortieth session, fencing): the SQL recipes of docs/fencing.md (`pg` and
 * TypeORM) send their fenced UPDATE again whenever the SELECT that explains its miss finds the
 * row with a fence not above the token, taking that for a row created in between, with no bound.
 * A row the UPDATE can never take but the SELECT sees so made them loop for good: a fence that
 * is NULL (the column added as `fence bigint`, without `NOT NULL DEFAULT 0`, or a row inserted
 * with it NULL), a trigger that skips the UPDATE (RETURN NULL: a frozen account). The call
 * never ended, two queries per turn without a pause, and its lock stayed held (renewed while the
 * loop awaited), so every deposit to the account waited for good as well.
 * A row created in between is found once; found so a second time, the recipes now fail, naming
 * the row, its fence and what may skip the UPDATE.
 */
describe('the SQL recipes of docs/fencing.md on a row their fenced UPDATE cannot take', () => {
  useRedis();
  const postgres = usePostgresPool();
  /** More explaining SELECTs than a row created in between can cause: the recipe is looping. */
  const LOOPING = 20;
  let pool: pg.Pool;
  beforeAll(() => void (pool = postgres.pool));

  const cases = {
    'a NULL fence': [
      'CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint)',
      "INSERT INTO accounts (id, balance, fence) VALUES ('a', 100, NULL)",
    ],
    'a trigger that skips the UPDATE': [
      'CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)',
      "CREATE FUNCTION frozen() RETURNS trigger AS 'BEGIN RETURN NULL; END' LANGUAGE plpgsql",
      'CREATE TRIGGER frozen BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION frozen()',
      "INSERT INTO accounts (id, balance) VALUES ('a', 100)",
    ],
  } as const;

  async function setUp(statements: readonly string[]): Promise<void> {
    await pool.query('DROP TABLE IF EXISTS accounts');
    await pool.query('DROP FUNCTION IF EXISTS frozen');
    for (const statement of statements) await pool.query(statement);
  }

  /** `pool`, whose `LOOPING`th SELECT fails the recipe's call: on main it would never end. */
  function bounded(): { db: pg.Pool; selects: () => number } {
    let selects = 0;
    const query = async (text: string, values?: unknown[]) => {
      if (text.startsWith('SELECT') && ++selects >= LOOPING) throw new Error(`still looping after ${selects} SELECTs`);
      return pool.query(text, values);
    };
    return { db: { query } as unknown as pg.Pool, selects: () => selects };
  }

  describe.each(Object.entries(cases))('%s', (what, statements) => {
    beforeEach(() => setUp(statements));

    it.each([
      ['saveBalance', (db: pg.Pool) => saveBalance(db, 'a', 150n, 5)],
      ['loadBalance', (db: pg.Pool) => loadBalance(db, 'a', 5)],
    ] as const)('pg %s fails naming the row and its fence, after one more UPDATE, instead of looping', async (_, call) => {
      const { db, selects } = bounded();
      const error = await call(db).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      // Before: "still looping after 20 SELECTs" (and, unbounded, no end at all).
      expect(error?.message).toMatch(/^Account "a": the fenced UPDATE took no row/);
      expect(error?.message).toContain(`fence ${what === 'a NULL fence' ? 'NULL' : '0'}`);
      expect(selects()).toBe(2);
      expect((await pool.query('SELECT balance, fence FROM accounts')).rows).toEqual([{ balance: '100', fence: what === 'a NULL fence' ? null : '0' }]);
    });

    describe('TypeORM', () => {
      const typeorm = useTypeormAccounts(() => postgres.server.url);

      it.each([
        ['saveBalance', (accounts: AccountsService) => accounts.saveBalance('a', 150n, 5)],
        ['loadBalance', (accounts: AccountsService) => accounts.loadBalance('a', 5)],
      ] as const)('%s fails naming the row and its fence, after one more UPDATE, instead of looping', async (_, call) => {
        // The explaining SELECT is the recipe's only query() call.
        const original = typeorm.repository.query;
        let selects = 0;
        typeorm.repository.query = (async (...args: Parameters<Repository<Account>['query']>) => {
          if (++selects >= LOOPING) throw new Error(`still looping after ${selects} SELECTs`);
          return original.apply(typeorm.repository, args);
        }) as Repository<Account>['query'];
        let error: Error | undefined;
        try {
          error = await call(typeorm.moduleRef.get(AccountsService)).then(
            () => undefined,
            (e: unknown) => e as Error,
          );
        } finally {
          typeorm.repository.query = original;
        }
        expect(error?.message).toMatch(/^Account "a": the fenced UPDATE took no row/);
        expect(selects).toBe(2);
        expect((await pool.query('SELECT balance, fence FROM accounts')).rows).toEqual([{ balance: '100', fence: what === 'a NULL fence' ? null : '0' }]);
      });
    });
  });
});
