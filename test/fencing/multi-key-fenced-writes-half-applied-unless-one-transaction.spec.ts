import { Test, type TestingModule } from '@nestjs/testing';
import { FencedRedis, FencedWriteRefusedError, LockService, RedisLockModule } from 'nestjs-redis-lock';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBalance, transfer } from './recipes/pg-accounts.js';
import { refusedWith } from '../support/refused-with.js';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review (thirty-fourth session, fencing): nothing in the docs said what two fenced
 * writes under one multi-key lock come to when its holder outlived its lease. docs/lock-family.md
 * calls the lock "all or nothing" and passes `lock.fencingTokens` to a `ledger.move()`, and
 * docs/fencing.md only says to use `lock.fencingTokens[key]` per key; yet each resource checks
 * its own token, so the stale holder's debit lands where nobody else wrote and its credit is
 * refused where a newer holder of that key claimed: half a transfer, money gone. That is inherent
 * to per-resource fences, so the docs now say it, and docs/fencing.md gives the correct way for
 * SQL, one transaction (`transfer()`, pinned here); on Redis, data that must change together is
 * one resource.
 */
describe('two fenced writes under one multi-key lock whose holder outlived its lease', () => {
  const redis = useRedis();
  let server: PostgresServer;
  let pool: pg.Pool;
  let moduleRef: TestingModule;
  let locks: LockService;
  beforeAll(async () => {
    server = await startPostgresServer();
    pool = new pg.Pool({ connectionString: server.url });
    pool.on('error', () => undefined); // a client still closing when the server stops at teardown (57P01)
    await pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL, fence bigint NOT NULL DEFAULT 0)');
    moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })] }).compile();
    await moduleRef.init();
    locks = moduleRef.get(LockService);
  }, 60_000);
  afterAll(async () => {
    await moduleRef?.close();
    await pool?.end();
    await server?.stop();
  });

  /** The tokens of a multi-key lock on both accounts whose lease ran out, and a newer holder of `b` alone. */
  async function staleAndNewer(): Promise<{ stale: Readonly<Record<string, number>>; newer: number }> {
    const lock = await locks.acquire(['account:a', 'account:b']);
    const stale = { ...lock.fencingTokens };
    await lock.release(); // as its lease running out while its holder is paused
    const newer = await locks.acquire('account:b');
    await newer.release();
    return { stale, newer: newer.fencingToken };
  }

  it('FencedRedis: the write to the key nobody took since lands, the other is refused (each resource checks its own token)', async () => {
    const fenced = moduleRef.get(FencedRedis);
    const { stale, newer } = await staleAndNewer();
    expect(await fenced.get('balance:{b}', newer)).toBeNull(); // the newer holder of b claims it
    await fenced.set('balance:{a}', 70, stale['account:a']!); // the stale debit: accepted
    const refused = await refusedWith(fenced.set('balance:{b}', 130, stale['account:b']!), FencedWriteRefusedError); // its credit
    expect(refused).toMatchObject({ key: 'balance:{b}', highestToken: newer });
    expect([await redis.get('balance:{a}'), await redis.get('balance:{b}')]).toEqual(['70', null]); // half applied
  });

  it('pg transfer(): one transaction, so the refusal of either row leaves both as they were', async () => {
    await pool.query("INSERT INTO accounts (id, balance) VALUES ('a', 100), ('b', 100)");
    const { stale, newer } = await staleAndNewer();
    expect(await loadBalance(pool, 'b', newer)).toBe(100n); // the newer holder of b claims it
    const refused = await refusedWith(transfer(pool, 'a', 'b', 30, stale), FencedWriteRefusedError);
    expect(refused).toMatchObject({ key: 'accounts/b', fencingToken: stale['account:b'], highestToken: newer });
    expect((await pool.query('SELECT id, balance, fence FROM accounts ORDER BY id')).rows).toEqual([
      { id: 'a', balance: '100', fence: '0' }, // its claim rolled back with the rest
      { id: 'b', balance: '100', fence: String(newer) },
    ]);
    await locks.using(['account:a', 'account:b'], (lock) => transfer(pool, 'a', 'b', 30, lock.fencingTokens));
    expect((await pool.query('SELECT id, balance FROM accounts ORDER BY id')).rows).toEqual([
      { id: 'a', balance: '70' },
      { id: 'b', balance: '130' },
    ]);
  });
});
