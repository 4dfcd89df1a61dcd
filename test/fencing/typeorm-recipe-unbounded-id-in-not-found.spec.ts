import { beforeEach, describe, expect, it } from 'vitest';
import { EntityNotFoundError } from 'typeorm';
import { AccountsService } from './recipes/typeorm-accounts.js';
import { useTypeormAccounts } from './recipes/typeorm-accounts-module.js';
import { usePostgresPool } from '../support/postgres-pool.js';
import { useRedis } from '../support/redis.js';

/**
 * Review (HTTP answers and logs), follow-up of a5255e5: the TypeORM recipe of docs/fencing.md
 * refused a fenced UPDATE of an account that does not exist with `new EntityNotFoundError(Account,
 * { id })`, the id from the request whole: TypeORM writes its criteria into the message with
 * JSON.stringify (a newline comes out escaped) but uncut, so an id of 100 KB made a 100 KB message
 * and log line per request, and kept it whole as the error's `criteria`, which JSON loggers print.
 * The recipe now names the id cut to 100 characters, as its other error does.
 */
describe('the TypeORM recipe of docs/fencing.md, on an account that does not exist', () => {
  useRedis();
  const postgres = usePostgresPool();
  const typeorm = useTypeormAccounts(() => postgres.server.url);
  const forged = `x\n${'[WARN] forged log line '.repeat(5_000)}`;
  beforeEach(async () => {
    await postgres.pool.query('DROP TABLE IF EXISTS accounts');
    await postgres.pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
  });

  it.each(['loadBalance', 'saveBalance'] as const)('%s throws an EntityNotFoundError naming the id escaped and cut', async (method) => {
    const accounts = typeorm.moduleRef.get(AccountsService);
    const call = method === 'loadBalance' ? accounts.loadBalance(forged, 5) : accounts.saveBalance(forged, 150n, 5);
    const error = await call.then(
      () => undefined,
      (caught: unknown) => caught as EntityNotFoundError,
    );
    expect(error).toBeInstanceOf(EntityNotFoundError);
    expect(error!.message).toContain('"x\\n[WARN] forged log line ');
    expect(error!.message).not.toContain('x\n[WARN]');
    expect(error!.message.length).toBeLessThan(400);
    expect(JSON.stringify(error!.criteria).length).toBeLessThan(400);
  });
});
