// The recipes import the package by name (as a user's code does): the built one, as here.
import { FencedWriteRefusedError } from 'nestjs-redis-lock';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadBalance, saveBalance } from './recipes/pg-accounts.js';
import { Account, AccountsService } from './recipes/typeorm-accounts.js';
import { refusedWith } from '../support/refused-with.js';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';

/**
 * The lost update that fenced writes alone let through, step by step (no timing): holder A
 * (token 41) reads the balance and is paused past its lease; B (token 42) takes the lock and
 * reads; A's late write lands (the row's token is still 40: accepted, and A's caller is told its
 * deposit went in); B writes a balance computed without it (accepted). The recipes of
 * docs/fencing.md read with a claim instead, which raises the row's token to 42 at B's read, so
 * A's write is refused. Run with the pg recipe and the TypeORM one.
 */

/** How a recipe reads (plainly or claiming the row) and writes one account's balance. */
interface Recipe {
  plainRead(id: string): Promise<number>;
  claimingRead(id: string, fencingToken: number): Promise<number>;
  write(id: string, balance: number, fencingToken: number): Promise<void>;
}

const A = 41;
const B = 42;

describe('a read-modify-write of two holders interleaved on PostgreSQL: the read must claim the row', () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  let typeorm: DataSource;
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: server.url });
    pool.on('error', () => undefined); // a client still closing when the server stops at teardown (57P01)
    await pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
    typeorm = await new DataSource({ type: 'postgres', url: server.url, entities: [Account] }).initialize();
  }, 60_000);
  afterAll(async () => {
    await typeorm?.destroy();
    await pool?.end();
    await server?.stop();
  });
  beforeEach(async () => {
    // A row that an earlier holder (token 40) wrote last.
    await pool.query("DELETE FROM accounts; INSERT INTO accounts (id, balance, fence) VALUES ('7', 100, 40)");
  });

  const recipes: Record<string, () => Recipe> = {
    pg: () => ({
      plainRead: async (id) => Number((await pool.query<{ balance: string }>('SELECT balance FROM accounts WHERE id = $1', [id])).rows[0]!.balance),
      claimingRead: async (id, token) => Number(await loadBalance(pool, id, token)),
      write: (id, balance, token) => saveBalance(pool, id, BigInt(balance), token),
    }),
    TypeORM: () => {
      // Only the repository is used by the two methods: the lock service is the caller's.
      const service = new AccountsService(typeorm.getRepository(Account), undefined as never);
      return {
        plainRead: async (id) => Number((await typeorm.getRepository(Account).findOneByOrFail({ id })).balance),
        claimingRead: async (id, token) => Number(await service.loadBalance(id, token)),
        write: (id, balance, token) => service.saveBalance(id, BigInt(balance), token),
      };
    },
  };

  const row = async () => (await pool.query<{ balance: string; fence: string }>("SELECT balance, fence FROM accounts WHERE id = '7'")).rows[0];

  describe.each(Object.keys(recipes))('with the %s recipe', (name) => {
    it('with a plain read (the test bites): A reads, B reads, A writes (accepted), B writes: A\'s deposit, acknowledged, is lost', async () => {
      const recipe = recipes[name]!();
      const readByA = await recipe.plainRead('7');
      const readByB = await recipe.plainRead('7');
      await recipe.write('7', readByA + 10, A); // accepted: the row's token is 40
      await recipe.write('7', readByB + 50, B);
      // Both deposits were acknowledged (160 expected); B's write put back a value read before A's.
      expect(await row()).toEqual({ balance: '150', fence: String(B) });
    });

    it('with the claiming read: A claims (41), B claims (42), A\'s write is refused, B\'s lands: no acknowledged deposit is lost', async () => {
      const recipe = recipes[name]!();
      const readByA = await recipe.claimingRead('7', A);
      expect(await row()).toEqual({ balance: '100', fence: String(A) });
      const readByB = await recipe.claimingRead('7', B);
      expect(await row()).toEqual({ balance: '100', fence: String(B) });
      const refused = await refusedWith(recipe.write('7', readByA + 10, A), FencedWriteRefusedError);
      expect(refused).toMatchObject({ key: 'accounts/7', fencingToken: A, highestToken: B, operation: 'write' });
      await recipe.write('7', readByB + 50, B);
      // Only B's deposit was acknowledged, and the balance holds exactly it.
      expect(await row()).toEqual({ balance: '150', fence: String(B) });
      // A, late, reading again: its claim is refused too, naming the token that won.
      const refusedRead = await refusedWith(recipe.claimingRead('7', A), FencedWriteRefusedError);
      expect(refusedRead).toMatchObject({ key: 'accounts/7', fencingToken: A, highestToken: B, operation: 'read' });
      expect(refusedRead.message).toContain('Fenced read');
      expect(await row()).toEqual({ balance: '150', fence: String(B) });
    });

    it('holders one after the other are not refused: a claim passes its own token, and reads what the previous holder wrote', async () => {
      const recipe = recipes[name]!();
      const readByA = await recipe.claimingRead('7', A);
      await recipe.write('7', readByA + 10, A);
      expect(await recipe.claimingRead('7', A)).toBe(110); // a reentrant holder claims again with its token
      const readByB = await recipe.claimingRead('7', B);
      await recipe.write('7', readByB + 50, B);
      expect(await row()).toEqual({ balance: '160', fence: String(B) });
    });
  });
});
