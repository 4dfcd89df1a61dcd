import { FencedWriteRefusedError } from 'nestjs-redis-lock';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { refusedWith } from './support/refused-with.js';
import { waitForLockWait } from './support/postgres-lock-wait.js';
import { startPostgresServer, type PostgresServer } from './support/postgres-server.js';

/** The sample app's balances as built by `npm run build:sample` (which `npm test` runs first), as the demo runs them. */
interface Database {
  onModuleInit(): Promise<void>;
  onApplicationShutdown(): Promise<void>;
}
interface BalanceStore {
  read(accountId: string): Promise<number>;
  write(accountId: string, balance: number, fencingToken?: number): Promise<void>;
}
const built = (file: string): Promise<Record<string, new (...args: unknown[]) => unknown>> => import(new URL(`../sample-app/dist/accounts/${file}`, import.meta.url).href);

const refusal = (write: Promise<unknown>) => refusedWith(write, FencedWriteRefusedError);

describe("the sample app's balances on a real PostgreSQL server (DATABASE_URL)", () => {
  let server: PostgresServer;
  let database: Database;
  let store: BalanceStore;
  let admin: pg.Pool;
  beforeAll(async () => {
    server = await startPostgresServer();
    database = new (await built('database.js')).Database!({ databaseUrl: server.url, openDatabase: 'at-start' }) as Database;
    await database.onModuleInit();
    store = new (await built('balance-store.js')).BalanceStore!(database) as BalanceStore;
    admin = new pg.Pool({ connectionString: server.url });
    admin.on('error', () => undefined); // a client still closing when the server stops at teardown (57P01)
  }, 60_000);
  afterAll(async () => {
    await database?.onApplicationShutdown();
    await admin?.end();
    await server?.stop();
  });
  beforeEach(async () => {
    await admin.query('DELETE FROM accounts');
  });

  it('writes with a token not lower than the row\'s, creates the row on the first write, refuses a lower token naming both', async () => {
    await store.write('a', 10, 3);
    await store.write('a', 20, 3); // a reentrant holder: the same token twice
    const refused = await refusal(store.write('a', 5, 2));
    expect(refused).toMatchObject({ key: 'accounts/a', fencingToken: 2, highestToken: 3 });
    expect(await store.read('a')).toBe(20);
  });

  // The paused holder's late write can reach the row while the newer holder's write is still in
  // its transaction: it waits for the row, then is refused, and must name the token that won.
  it.each([
    ['an existing row', true],
    ['a row the newer holder is creating', false],
  ])('a write that waited for a newer holder\'s uncommitted write to %s is refused naming the newer token', async (_, exists) => {
    if (exists) await store.write('race', 100, 40);
    const newer = await admin.connect();
    try {
      await newer.query('BEGIN');
      await newer.query('INSERT INTO accounts (id, balance, fence) VALUES ($1, 150, 42) ON CONFLICT (id) DO UPDATE SET balance = 150, fence = 42', ['race']);
      const late = store.write('race', 110, 41);
      late.catch(() => undefined);
      await waitForLockWait(server.url);
      await newer.query('COMMIT');
      const refused = await refusal(late);
      expect(refused).toMatchObject({ key: 'accounts/race', fencingToken: 41, highestToken: 42 });
      expect(await store.read('race')).toBe(150);
    } finally {
      newer.release();
    }
  });

  it('starts beside an instance whose schema creation is still in its transaction', async () => {
    // Instances started together create the table at once; the one that waits for the other's
    // uncommitted table sees it exist after all (PostgreSQL's "type already exists", 42710).
    await admin.query('CREATE DATABASE schema_race');
    const url = server.url.replace(/\/postgres$/, '/schema_race');
    const first = new pg.Client({ connectionString: url });
    await first.connect();
    const second = new (await built('database.js')).Database!({ databaseUrl: url, openDatabase: 'at-start' }) as Database;
    try {
      await first.query('BEGIN');
      await first.query('CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY)');
      const starting = second.onModuleInit();
      starting.catch(() => undefined);
      await waitForLockWait(server.url);
      await first.query('COMMIT');
      await expect(starting).resolves.toBeUndefined();
    } finally {
      await second.onApplicationShutdown();
      await first.end();
    }
  });
});
