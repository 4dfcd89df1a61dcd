import { describe, expect, it } from 'vitest';
import { EntityNotFoundError } from 'typeorm';
import { loadBalance, transfer } from './recipes/pg-accounts.js';
import { AccountsService } from './recipes/typeorm-accounts.js';
import { useTypeormAccounts } from './recipes/typeorm-accounts-module.js';
import { usePostgresPool } from '../support/postgres-pool.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (fencing): the SQL recipes of docs/fencing.md show an account id in their errors "quoted
 * by JSON.stringify, which escapes newlines and other control characters ... so that an id from a
 * request cannot forge a log line". JSON.stringify escapes U+0000-U+001F only: it leaves raw the C1
 * controls (U+0085 NEL is a newline, U+009B starts an ANSI sequence), the line and paragraph
 * separators U+2028/U+2029 (line breaks to many log viewers) and bidi overrides (U+202E), as
 * test/hostile-key-text.spec.ts found of the library's own quoting, which now escapes them. The
 * TypeORM recipe's EntityNotFoundError, whose criteria TypeORM stringifies, carried them raw too.
 */
const FORGED = 'acct:1\u0085[Nest] 1  - ERROR [RedisLock] forged line\u2028another forged line\u009b31mred\u202Edesrever\u2029';
const UNESCAPED = /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

async function failure(call: () => Promise<unknown>): Promise<Error> {
  return call().then(
    () => {
      throw new Error('expected the call to fail');
    },
    (caught: unknown) => caught as Error,
  );
}

describe('an account id with C1 controls, Unicode line separators and bidi overrides, in the SQL recipes of docs/fencing.md', () => {
  useRedis();
  const postgres = usePostgresPool();
  const typeorm = useTypeormAccounts(() => postgres.server.url);
  const table = async (fence: 'NOT NULL DEFAULT 0' | 'NULL'): Promise<void> => {
    await postgres.pool.query('DROP TABLE IF EXISTS accounts');
    await postgres.pool.query(`CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint ${fence})`);
  };

  it('pg: is escaped in "No account" and in the transfer-to-itself error', async () => {
    await table('NOT NULL DEFAULT 0');
    for (const error of [await failure(() => loadBalance(postgres.pool, FORGED, 1)), await failure(() => transfer(postgres.pool, FORGED, FORGED, 1, {}))]) {
      expect(error.message).toContain('acct:1\\u0085[Nest]');
      expect(error.message).not.toMatch(UNESCAPED);
    }
  });

  it('TypeORM: is escaped in the NULL-fence error and in the EntityNotFoundError', async () => {
    await table('NULL');
    await postgres.pool.query('INSERT INTO accounts (id, balance, fence) VALUES ($1, 100, NULL)', [FORGED]);
    const accounts = typeorm.moduleRef.get(AccountsService);
    const nullFence = await failure(() => accounts.saveBalance(FORGED, 150n, 5));
    expect(nullFence.message).toMatch(/^Account "acct:1\\u0085\[Nest\] .*": the fenced UPDATE took no row/);
    expect(nullFence.message).not.toMatch(UNESCAPED);
    const notFound = await failure(() => accounts.loadBalance(`${FORGED}-missing`, 5));
    expect(notFound).toBeInstanceOf(EntityNotFoundError);
    expect(notFound.message).not.toMatch(UNESCAPED);
  });
});
