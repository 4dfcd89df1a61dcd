import { FencedWriteRefusedError } from 'nestjs-redis-lock';
import pg from 'pg';
import { EntityNotFoundError, type Repository } from 'typeorm';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadBalance, saveBalance } from './recipes/pg-accounts.js';
import { Account, AccountsService } from './recipes/typeorm-accounts.js';
import { refusedWith } from '../support/refused-with.js';
import { usePostgresPool } from '../support/postgres-pool.js';
import { useTypeormAccounts } from './recipes/typeorm-accounts-module.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (thirty-fourth session, fencing): the SQL recipes of docs/fencing.md (`pg` and
 * TypeORM) explain a fenced UPDATE that took no row by a `SELECT` of their own, and read any row
 * that SELECT finds as the refusal. A row created between the two (the account opened by another
 * request, or deleted and created again) has the default fence 0: the recipes threw
 * `FencedWriteRefusedError` "token 5 is lower than 0", a refusal by a lower token, for a write
 * the row would have taken; the caller, told a newer holder owns the account, dropped a deposit
 * to it. Now a row found with a fence not above the token sends the UPDATE again, which writes
 * (or claims) it; a higher fence is still the refusal, and no row still says there is none.
 */
describe('the SQL recipes of docs/fencing.md when the row is created between the fenced UPDATE and its SELECT', () => {
  useRedis();
  const postgres = usePostgresPool();
  let pool: pg.Pool;
  beforeAll(() => void (pool = postgres.pool));
  beforeEach(async () => {
    await pool.query('DROP TABLE IF EXISTS accounts');
    await pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
  });

  /**
   * `pool`, on which the first UPDATE that takes no row is followed, before its answer reaches the
   * recipe (so before the recipe's SELECT), by `created` committed on another connection.
   */
  function createdAfterMiss(created: string): pg.Pool {
    let done = false;
    const query = async (text: string, values?: unknown[]) => {
      const result = await pool.query(text, values);
      if (!done && text.startsWith('UPDATE') && result.rowCount === 0) {
        done = true;
        await pool.query(created);
      }
      return result;
    };
    return { query } as unknown as pg.Pool;
  }

  const rows = async () => (await pool.query('SELECT id, balance, fence FROM accounts ORDER BY id')).rows;

  it('pg: the write lands on the row created after its UPDATE missed, rather than a refusal by token 0', async () => {
    await saveBalance(createdAfterMiss("INSERT INTO accounts (id, balance) VALUES ('new', 100)"), 'new', 150n, 5);
    expect(await rows()).toEqual([{ id: 'new', balance: '150', fence: '5' }]);
  });

  it('pg: the read for update claims and reads it', async () => {
    expect(await loadBalance(createdAfterMiss("INSERT INTO accounts (id, balance) VALUES ('new', 100)"), 'new', 5)).toBe(100n);
    expect(await rows()).toEqual([{ id: 'new', balance: '100', fence: '5' }]);
  });

  it('pg: a row created with a higher fence is still the refusal, naming it; no row still says there is none', async () => {
    const refused = await refusedWith(saveBalance(createdAfterMiss("INSERT INTO accounts (id, balance, fence) VALUES ('new', 100, 9)"), 'new', 150n, 5), FencedWriteRefusedError);
    expect(refused).toMatchObject({ key: 'accounts/new', fencingToken: 5, highestToken: 9, operation: 'write' });
    await expect(loadBalance(pool, 'missing', 5)).rejects.toThrow('No account "missing"');
    expect(await rows()).toEqual([{ id: 'new', balance: '100', fence: '9' }]);
  });

  describe('TypeORM', () => {
    const typeorm = useTypeormAccounts(() => postgres.server.url);

    /** The row `created` is committed just before the recipe's SELECT that explains its UPDATE's miss (through `query()`). */
    function createBeforeSelect(created: string): () => void {
      const original = typeorm.repository.query;
      typeorm.repository.query = (async (...args: Parameters<Repository<Account>['query']>) => {
        typeorm.repository.query = original;
        await pool.query(created);
        return original.apply(typeorm.repository, args);
      }) as Repository<Account>['query'];
      return () => (typeorm.repository.query = original);
    }

    it('the write lands on the row created after its UPDATE missed, and the read for update claims it', async () => {
      const accounts = typeorm.moduleRef.get(AccountsService);
      let restore = createBeforeSelect("INSERT INTO accounts (id, balance) VALUES ('new', 100)");
      try {
        await accounts.saveBalance('new', 150n, 5);
      } finally {
        restore();
      }
      expect(await rows()).toEqual([{ id: 'new', balance: '150', fence: '5' }]);
      restore = createBeforeSelect("INSERT INTO accounts (id, balance) VALUES ('other', 70)");
      try {
        expect(await accounts.loadBalance('other', 6)).toBe(70n);
      } finally {
        restore();
      }
      expect(await rows()).toEqual([
        { id: 'new', balance: '150', fence: '5' },
        { id: 'other', balance: '70', fence: '6' },
      ]);
    });

    it('a row created with a higher fence is still the refusal; no row still EntityNotFoundError', async () => {
      const accounts = typeorm.moduleRef.get(AccountsService);
      const restore = createBeforeSelect("INSERT INTO accounts (id, balance, fence) VALUES ('new', 100, 9)");
      try {
        const refused = await refusedWith(accounts.loadBalance('new', 5), FencedWriteRefusedError);
        expect(refused).toMatchObject({ key: 'accounts/new', fencingToken: 5, highestToken: 9, operation: 'read' });
      } finally {
        restore();
      }
      await expect(accounts.saveBalance('missing', 1n, 5)).rejects.toBeInstanceOf(EntityNotFoundError);
    });
  });
});
