import type { TestingModule } from '@nestjs/testing';
import { FencedWriteRefusedError, LockService } from 'nestjs-redis-lock';
import pg from 'pg';
import { EntityNotFoundError } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsService } from './recipes/typeorm-accounts.js';
import { typeormAccountsModule } from './recipes/typeorm-accounts-module.js';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (thirty-third session, fencing): docs/fencing.md's TypeORM recipe answered a
 * claim or a write to an account that does not exist (an id mistyped, an account not created yet
 * or deleted) with `FencedWriteRefusedError`, whose `highestToken` was `NaN` ("its fencing token
 * ... is lower than NaN"): the recipe read the refusing fence of a row that is not there. That
 * error tells the caller that a newer holder owns the row and this one lost its lock, which the
 * error's own example handles by returning quietly: a deposit to a missing account was dropped as
 * if another holder had it. The `pg` recipe beside it says there is no such account.
 */
describe("docs/fencing.md's TypeORM recipe on an account that does not exist", () => {
  useRedis();
  let server: PostgresServer;
  let admin: pg.Pool;
  let moduleRef: TestingModule;
  beforeAll(async () => {
    server = await startPostgresServer();
    admin = new pg.Pool({ connectionString: server.url });
    admin.on('error', () => undefined); // a client still closing when the server stops at teardown (57P01)
    await admin.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
    moduleRef = await typeormAccountsModule(server.url);
  }, 60_000);
  afterAll(async () => {
    await moduleRef?.close();
    await admin?.end();
    await server?.stop();
  });

  it('a deposit, a claim and a write reject with TypeORM\'s EntityNotFoundError, not a fencing refusal', async () => {
    const accounts = moduleRef.get(AccountsService);
    const deposit = await accounts.deposit('ghost', 10).catch((error: unknown) => error);
    expect(deposit).not.toBeInstanceOf(FencedWriteRefusedError);
    expect(deposit).toBeInstanceOf(EntityNotFoundError);

    const lock = await moduleRef.get(LockService).acquire('account:ghost');
    try {
      // One after the other: made at once, the write's rejection came while the read was awaited,
      // with no handler yet (an unhandled rejection on a loaded machine).
      for (const call of [() => accounts.loadBalance('ghost', lock.fencingToken), () => accounts.saveBalance('ghost', 10n, lock.fencingToken)]) {
        const error = await call().catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(EntityNotFoundError);
      }
    } finally {
      await lock.release();
    }
    expect((await admin.query('SELECT * FROM accounts')).rows).toEqual([]);
  });
});
