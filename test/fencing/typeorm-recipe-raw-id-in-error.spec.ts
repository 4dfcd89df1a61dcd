import { beforeEach, describe, expect, it } from 'vitest';
import { AccountsService } from './recipes/typeorm-accounts.js';
import { useTypeormAccounts } from './recipes/typeorm-accounts-module.js';
import { usePostgresPool } from '../support/postgres-pool.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (fencing), follow-up of the pg recipe's fix: the TypeORM recipe of docs/fencing.md put
 * the account id into its error raw and whole too ("Account <id>: the fenced UPDATE took no
 * row ..."): an id from a request with a newline forged a log line, a long one flooded it. It
 * now shows it cut and quoted by JSON.stringify, as the pg recipe does.
 */
describe('the TypeORM recipe of docs/fencing.md, on a row its fenced UPDATE cannot take (a NULL fence)', () => {
  useRedis();
  const postgres = usePostgresPool();
  const typeorm = useTypeormAccounts(() => postgres.server.url);
  const forged = `x\n${'[WARN] forged log line '.repeat(100)}`;
  beforeEach(async () => {
    await postgres.pool.query('DROP TABLE IF EXISTS accounts');
    await postgres.pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint)');
    await postgres.pool.query('INSERT INTO accounts (id, balance, fence) VALUES ($1, 100, NULL)', [forged]);
  });

  it('names the account id quoted, escaped and cut', async () => {
    const error = await typeorm.moduleRef
      .get(AccountsService)
      .saveBalance(forged, 150n, 5)
      .then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
    expect(error?.message).toMatch(/^Account "x\\n\[WARN\] forged log line .*": the fenced UPDATE took no row/);
    expect(error?.message).not.toContain('\n');
    expect(error!.message.length).toBeLessThan(400);
  });
});
