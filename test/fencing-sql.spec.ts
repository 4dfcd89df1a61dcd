import { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
// The recipes import the package by name (as a user's code does): the built one, as here.
import { FencedRedis, FencedWriteRefusedError, LockService, RedisLockModule } from 'nestjs-redis-lock';
import pg from 'pg';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { refusedWith } from './support/refused-with.js';
import { deposit, loadBalance, saveBalance } from './fencing/recipes/pg-accounts.js';
import { Account, AccountsService, AddAccountFence1764547200000 } from './fencing/recipes/typeorm-accounts.js';
import { WalletService } from './fencing/recipes/redis-wallet.js';
import { codeBlocks } from './docs/markdown.js';
import { waitForLockWait } from './support/postgres-lock-wait.js';
import type { PostgresServer } from './support/postgres-server.js';
import { usePostgresPool } from './support/postgres-pool.js';
import { redisUrl, useRedis } from './support/redis.js';

const recipe = (file: string) => readFileSync(new URL(`./fencing/recipes/${file}`, import.meta.url), 'utf8');

/** The text between `#region <name>` and `#endregion` (comment marker `//` or `--`), dedented. */
function region(file: string, name: string): string {
  const lines = recipe(file).split('\n');
  const start = lines.findIndex((line) => new RegExp(`^\\s*(//|--) #region ${name}$`).test(line));
  const end = lines.findIndex((line, i) => i > start && /^\s*(\/\/|--) #endregion$/.test(line));
  if (start === -1 || end === -1) throw new Error(`no region ${name} in ${file}`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length));
  return body.map((line) => line.slice(indent)).join('\n');
}

/** The recipe regions that are docs/fencing.md's code, each run by a test below. */
const RECIPE_REGIONS: readonly (readonly [file: string, name: string])[] = [
  ['accounts.sql', 'schema'],
  ['migration.sql', 'migration'],
  ['pg-accounts.ts', 'pg'],
  ['pg-accounts.ts', 'pg-usage'],
  ['pg-accounts.ts', 'pg-transfer'],
  ['typeorm-accounts.ts', 'typeorm-entity'],
  ['typeorm-accounts.ts', 'typeorm-migration'],
  ['typeorm-accounts.ts', 'typeorm-service'],
  ['redis-wallet.ts', 'redis'],
];

async function lockModule(): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })] }).compile();
  await moduleRef.init();
  return moduleRef;
}

const refusal = (write: Promise<unknown>) => refusedWith(write, FencedWriteRefusedError);

describe('fenced writes to PostgreSQL: the recipes of docs/fencing.md, run on a real server', () => {
  useRedis(); // flushed before each test: fencing counters start again at 1
  const postgres = usePostgresPool();
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(() => void ({ server, pool } = postgres));
  beforeEach(async () => {
    await pool.query('DROP TABLE IF EXISTS accounts');
  });

  it('every recipe region is in docs/fencing.md, line for line', () => {
    const guide = readFileSync(new URL('../docs/fencing.md', import.meta.url), 'utf8');
    const regions = RECIPE_REGIONS.map(([file, name]) => region(file, name));
    for (const text of regions) expect(guide).toContain('\n' + text + '\n```');
  });

  it('and every ts or sql block of docs/fencing.md is one of those regions: none is only compiled, none untested', () => {
    const regions = new Set(RECIPE_REGIONS.map(([file, name]) => region(file, name)));
    const blocks = codeBlocks('docs/fencing.md').filter((block) => block.lang === 'ts' || block.lang === 'sql');
    expect(blocks.length).toBe(regions.size);
    for (const block of blocks) expect(regions, `docs/fencing.md line ${block.line} is no recipe region`).toContain(block.code);
  });

  it('pg: writes with a token not lower than the row\'s, again with the same token, and refuses a lower one naming both', async () => {
    await pool.query(region('accounts.sql', 'schema'));
    await pool.query("INSERT INTO accounts (id, balance) VALUES ('a', 100)");
    await saveBalance(pool, 'a', 110n, 2);
    await saveBalance(pool, 'a', 120n, 2); // a reentrant holder: the same token twice
    await saveBalance(pool, 'a', 130n, 10);
    const refused = await refusal(saveBalance(pool, 'a', 90n, 9)); // 9 < 10 as numbers, not as text
    expect(refused).toMatchObject({ key: 'accounts/a', fencingToken: 9, highestToken: 10 });
    const { rows } = await pool.query('SELECT balance, fence FROM accounts WHERE id = $1', ['a']);
    expect(rows).toEqual([{ balance: '130', fence: '10' }]);
    await expect(saveBalance(pool, 'missing', 1n, 1)).rejects.toThrow('No account "missing"');
  });

  it('pg: a read for update claims the row with its token (again with the same token) and refuses a lower one naming both, changing nothing', async () => {
    await pool.query(region('accounts.sql', 'schema'));
    await pool.query("INSERT INTO accounts (id, balance, fence) VALUES ('a', 100, 3)");
    expect(await loadBalance(pool, 'a', 3)).toBe(100n); // equal tokens pass
    expect(await loadBalance(pool, 'a', 10)).toBe(100n);
    expect(await loadBalance(pool, 'a', 10)).toBe(100n); // a reentrant holder: the same token twice
    expect((await pool.query('SELECT balance, fence FROM accounts')).rows).toEqual([{ balance: '100', fence: '10' }]);
    const refused = await refusal(loadBalance(pool, 'a', 9)); // 9 < 10 as numbers, not as text
    expect(refused).toMatchObject({ key: 'accounts/a', fencingToken: 9, highestToken: 10, operation: 'read' });
    // The claim at 10 refuses the write of token 9 too, though token 10 has written nothing.
    expect(await refusal(saveBalance(pool, 'a', 90n, 9))).toMatchObject({ fencingToken: 9, highestToken: 10, operation: 'write' });
    expect((await pool.query('SELECT balance, fence FROM accounts')).rows).toEqual([{ balance: '100', fence: '10' }]);
    await expect(loadBalance(pool, 'missing', 1)).rejects.toThrow('No account "missing"');
  });

  it('pg: a claiming read that waited for a newer holder\'s uncommitted claim is refused naming the newer token', async () => {
    await pool.query(region('accounts.sql', 'schema'));
    await pool.query("INSERT INTO accounts (id, balance, fence) VALUES ('race', 100, 40)");
    const newer = await pool.connect();
    try {
      await newer.query('BEGIN');
      await loadBalance(newer, 'race', 42);
      const late = loadBalance(pool, 'race', 41);
      late.catch(() => undefined);
      await waitForLockWait(server.url);
      await newer.query('COMMIT');
      expect(await refusal(late)).toMatchObject({ key: 'accounts/race', fencingToken: 41, highestToken: 42, operation: 'read' });
    } finally {
      newer.release();
    }
  });

  it('pg: a write that waited for a newer holder\'s uncommitted write is refused naming the newer token, not the one it saw before waiting', async () => {
    await pool.query(region('accounts.sql', 'schema'));
    await pool.query("INSERT INTO accounts (id, balance, fence) VALUES ('race', 100, 40)");
    const newer = await pool.connect();
    try {
      // The newer holder (token 42) has written the row in a transaction not yet committed; the
      // late write (token 41) arrives and waits for the row's lock.
      await newer.query('BEGIN');
      await saveBalance(newer, 'race', 150n, 42);
      const late = saveBalance(pool, 'race', 110n, 41);
      late.catch(() => undefined);
      await waitForLockWait(server.url);
      await newer.query('COMMIT');
      const refused = await refusal(late);
      expect(refused).toMatchObject({ key: 'accounts/race', fencingToken: 41, highestToken: 42 });
      expect((await pool.query('SELECT balance, fence FROM accounts')).rows).toEqual([{ balance: '150', fence: '42' }]);
    } finally {
      newer.release();
    }
  });

  it('pg: tokens beyond 32 bits fit the bigint column', async () => {
    await pool.query(region('accounts.sql', 'schema'));
    await pool.query("INSERT INTO accounts (id, balance) VALUES ('big', 0)");
    await saveBalance(pool, 'big', 1n, Number.MAX_SAFE_INTEGER - 1);
    await refusal(saveBalance(pool, 'big', 2n, 2 ** 32));
    await saveBalance(pool, 'big', 3n, Number.MAX_SAFE_INTEGER);
    expect((await pool.query('SELECT fence FROM accounts')).rows[0].fence).toBe(String(Number.MAX_SAFE_INTEGER));
  });

  it('the migration adds the column to a table with rows: they start at 0, so the first token writes', async () => {
    await pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL)');
    await pool.query("INSERT INTO accounts VALUES ('old', 5)");
    await pool.query(region('migration.sql', 'migration'));
    await saveBalance(pool, 'old', 6n, 1);
    expect((await pool.query('SELECT balance, fence FROM accounts')).rows).toEqual([{ balance: '6', fence: '1' }]);
  });

  it('pg with real locks: a holder whose lease ran out while it was between read and write is refused; the next holder\'s deposit stays', async () => {
    await pool.query(region('accounts.sql', 'schema'));
    await pool.query("INSERT INTO accounts (id, balance) VALUES ('acct', 100)");
    const [a, b] = await Promise.all([lockModule(), lockModule()]);
    try {
      const id = 'acct';
      const key = `account:${id}`; // the lock the recipe's usage takes: one resource, one lock key
      // A reads (claiming the row), then stops (as a paused process does): no renewal, the lease runs out.
      const paused = await a.get(LockService).acquire(key, { ttl: 200, autoRenew: false });
      const read = await loadBalance(pool, id, paused.fencingToken);
      const next = await b.get(LockService).acquire(key, { waitTimeout: 5_000 });
      await saveBalance(pool, id, (await loadBalance(pool, id, next.fencingToken)) + 50n, next.fencingToken);
      await next.release();
      const refused = await refusal(saveBalance(pool, id, read + 10n, paused.fencingToken));
      expect(refused).toMatchObject({ fencingToken: paused.fencingToken, highestToken: next.fencingToken });
      expect((await pool.query('SELECT balance FROM accounts')).rows[0].balance).toBe('150');
      // The recipe's usage, end to end.
      await deposit(b.get(LockService), pool, id, 25);
      expect((await pool.query('SELECT balance FROM accounts')).rows[0].balance).toBe('175');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  describe('TypeORM through @nestjs/typeorm', () => {
    const app = async (): Promise<TestingModule> => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }),
          TypeOrmModule.forRoot({ type: 'postgres', url: server.url, entities: [Account], migrations: [AddAccountFence1764547200000], migrationsRun: true }),
          TypeOrmModule.forFeature([Account]),
        ],
        providers: [AccountsService],
      }).compile();
      await moduleRef.init();
      return moduleRef;
    };

    it('the migration runs on start; deposits write with the lock\'s token; a holder whose lease ran out is refused', async () => {
      await pool.query('DROP TABLE IF EXISTS migrations');
      await pool.query('CREATE TABLE accounts (id text PRIMARY KEY, balance bigint NOT NULL)');
      await pool.query("INSERT INTO accounts VALUES ('t', 100)");
      const a = await app(); // runs the migration; the second instance finds it done
      const b = await app();
      try {
        expect((await pool.query('SELECT fence FROM accounts')).rows).toEqual([{ fence: '0' }]);
        await b.get(AccountsService).deposit('t', 20);
        const afterDeposit = (await pool.query('SELECT balance, fence FROM accounts')).rows[0];
        expect(afterDeposit.balance).toBe('120');
        expect(Number(afterDeposit.fence)).toBeGreaterThan(0);

        const paused = await a.get(LockService).acquire('account:t', { ttl: 200, autoRenew: false });
        const next = await b.get(LockService).acquire('account:t', { waitTimeout: 5_000 });
        expect(await b.get(AccountsService).loadBalance('t', next.fencingToken)).toBe(120n); // the claim
        const refusedRead = await refusal(a.get(AccountsService).loadBalance('t', paused.fencingToken));
        expect(refusedRead).toMatchObject({ key: 'accounts/t', fencingToken: paused.fencingToken, highestToken: next.fencingToken, operation: 'read' });
        await b.get(AccountsService).saveBalance('t', 170n, next.fencingToken);
        await next.release();
        const refused = await refusal(a.get(AccountsService).saveBalance('t', 130n, paused.fencingToken));
        expect(refused).toMatchObject({ key: 'accounts/t', fencingToken: paused.fencingToken, highestToken: next.fencingToken, operation: 'write' });
        await b.get(AccountsService).saveBalance('t', 180n, next.fencingToken); // the same token again
        expect((await pool.query('SELECT balance, fence FROM accounts')).rows).toEqual([{ balance: '180', fence: String(next.fencingToken) }]);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });

  it('the FencedRedis example: deposits through the module\'s FencedRedis add up, with the token kept beside the wallet', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], providers: [WalletService] }).compile();
    await moduleRef.init();
    try {
      await Promise.all(Array.from({ length: 5 }, () => moduleRef.get(WalletService).deposit('7', 10)));
      const fenced = moduleRef.get(FencedRedis);
      expect(await fenced.hget('wallet:{7}', 'balance')).toBe('50');
      // The last deposit's token: the lock's fencing counter as the fifth deposit left it.
      const counter = new Redis(redisUrl());
      try {
        expect(await fenced.fence('wallet:{7}')).toBe(Number(await counter.get('lock:{wallet:7}:fence')));
      } finally {
        counter.disconnect();
      }
    } finally {
      await moduleRef.close();
    }
  });
});
