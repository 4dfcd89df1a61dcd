import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RedisLockModule } from 'nestjs-redis-lock';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account, AccountsService } from './recipes/typeorm-accounts.js';
import { startPostgresReplica, startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review (rv31, fencing): docs/fencing.md's TypeORM recipe claimed the row with an UPDATE
 * and read the balance with a second statement, `findOneByOrFail`. With TypeORM's `replication`
 * option (a primary and read replicas, configured once in `TypeOrmModule.forRoot`, out of the
 * recipe's sight) TypeORM sends that `find` to a replica, so the balance "read for update" could be
 * older than the last holder's committed write: the holder added its amount to it and wrote it back
 * under its own, highest token, which the fence accepts. A deposit made under the lock was lost
 * without any pause or lease lost. The replica here is a real streaming replica that applies the
 * primary's changes 3 s late: a lag the test can count on.
 */
describe("docs/fencing.md's TypeORM recipe with a primary and a lagging read replica", () => {
  useRedis();
  let primary: PostgresServer;
  let replica: PostgresServer;
  let admin: pg.Pool;
  beforeAll(async () => {
    primary = await startPostgresServer();
    admin = new pg.Pool({ connectionString: primary.url });
    admin.on('error', () => undefined);
    await admin.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
    await admin.query("INSERT INTO accounts (id, balance) VALUES ('r', 100)");
    // Copied with the row: the replica starts from the primary as it is now.
    replica = await startPostgresReplica(primary, { applyDelayMs: 3_000 });
  }, 90_000);
  afterAll(async () => {
    await admin?.end();
    await replica?.stop();
    await primary?.stop();
  });

  const open = async (): Promise<TestingModule> => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
        TypeOrmModule.forRoot({ type: 'postgres', replication: { master: { url: primary.url }, slaves: [{ url: replica.url }] }, entities: [Account] }),
        TypeOrmModule.forFeature([Account]),
      ],
      providers: [AccountsService],
    }).compile();
    return moduleRef.init();
  };

  it('counts two deposits made one after the other under the lock', async () => {
    const moduleRef = await open();
    try {
      const accounts = moduleRef.get(AccountsService);
      await accounts.deposit('r', 50);
      await accounts.deposit('r', 10);
      // The replica has not applied the first deposit yet: what the recipe read came from the primary.
      const behind = new pg.Client({ connectionString: replica.url });
      await behind.connect();
      const lagging = await behind.query("SELECT balance FROM accounts WHERE id = 'r'").finally(() => behind.end());
      expect(lagging.rows[0].balance).toBe('100');
      const { rows } = await admin.query("SELECT balance FROM accounts WHERE id = 'r'");
      expect(rows[0].balance).toBe('160');
    } finally {
      await moduleRef.close();
    }
  });

  it("refuses a stale holder with the primary's fence, not the replica's", async () => {
    const moduleRef = await open();
    try {
      const accounts = moduleRef.get(AccountsService);
      const { rows } = await admin.query("SELECT fence FROM accounts WHERE id = 'r'");
      const newest = Number(rows[0].fence);
      const error = await accounts.loadBalance('r', newest - 1).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'FencedWriteRefusedError', fencingToken: newest - 1, highestToken: newest });
    } finally {
      await moduleRef.close();
    }
  });
});
