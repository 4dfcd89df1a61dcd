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
  read(accountId: string, fencingToken?: number): Promise<number>;
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

  it('a read with a token claims the row, creating an account not written yet at 0; a plain read creates nothing; a lower token is refused naming both', async () => {
    expect(await store.read('new')).toBe(0);
    expect((await admin.query("SELECT * FROM accounts WHERE id = 'new'")).rows).toEqual([]);
    expect(await store.read('new', 3)).toBe(0);
    expect((await admin.query("SELECT balance, fence FROM accounts WHERE id = 'new'")).rows).toEqual([{ balance: '0', fence: '3' }]);
    await store.write('new', 30, 3); // the claim's own token writes
    expect(await store.read('new', 3)).toBe(30); // and claims again (a reentrant holder)
    expect(await store.read('new', 5)).toBe(30);
    const refused = await refusal(store.read('new', 4));
    expect(refused).toMatchObject({ key: 'accounts/new', fencingToken: 4, highestToken: 5, operation: 'read' });
    expect((await admin.query("SELECT balance, fence FROM accounts WHERE id = 'new'")).rows).toEqual([{ balance: '30', fence: '5' }]);
  });

  // The lost update that fenced writes alone let through: A (token 1) reads and is paused; B
  // (token 2) reads; A's late write lands; B writes a balance computed without it.
  it.each([
    ['an account not written yet', false],
    ['an existing account', true],
  ])('on %s, a holder with a lower token whose write comes after a newer holder\'s claiming read is refused; the newer holder\'s deposit is exact', async (_, exists) => {
    if (exists) await store.write('acct', 100, 1);
    const start = exists ? 100 : 0;
    const readByA = await store.read('acct', 2); // A, token 2, then paused past its lease
    const readByB = await store.read('acct', 3); // B, token 3, took the lock meanwhile
    const refused = await refusal(store.write('acct', readByA + 10, 2)); // A's late write
    expect(refused).toMatchObject({ key: 'accounts/acct', fencingToken: 2, highestToken: 3, operation: 'write' });
    await store.write('acct', readByB + 50, 3);
    expect(await store.read('acct')).toBe(start + 50);
    // The same steps with plain reads, as before the claim: A's deposit is accepted, then lost.
    await store.write('acct', start, 4);
    const plainA = await store.read('acct');
    const plainB = await store.read('acct');
    await store.write('acct', plainA + 10, 5); // accepted: nothing claimed the row
    await store.write('acct', plainB + 50, 6);
    expect(await store.read('acct')).toBe(start + 50); // 10 acknowledged and lost
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

  it.each([
    ['an existing row', true],
    ['a row the newer holder is creating', false],
  ])('a claiming read that waited for a newer holder\'s uncommitted write to %s is refused naming the newer token', async (_, exists) => {
    if (exists) await store.write('race', 100, 40);
    const newer = await admin.connect();
    try {
      await newer.query('BEGIN');
      await newer.query('INSERT INTO accounts (id, balance, fence) VALUES ($1, 150, 42) ON CONFLICT (id) DO UPDATE SET balance = 150, fence = 42', ['race']);
      const late = store.read('race', 41);
      late.catch(() => undefined);
      await waitForLockWait(server.url);
      await newer.query('COMMIT');
      expect(await refusal(late)).toMatchObject({ key: 'accounts/race', fencingToken: 41, highestToken: 42, operation: 'read' });
      expect((await admin.query("SELECT balance, fence FROM accounts WHERE id = 'race'")).rows).toEqual([{ balance: '150', fence: '42' }]);
    } finally {
      newer.release();
    }
  });

  it('starts instances together on an empty database: the ones that lose the race to create the table go on', async () => {
    // PostgreSQL fails the losers of concurrent CREATE TABLE IF NOT EXISTS in ways that depend on
    // the moment they looked: 23505 or 42710 on the table's row type, 42P07 on the table. With 4
    // instances 42710 comes in about one round in twelve, so 100 rounds meet it.
    await admin.query('CREATE DATABASE schema_race');
    const url = server.url.replace(/\/postgres$/, '/schema_race');
    const reset = new pg.Client({ connectionString: url });
    reset.on('error', () => undefined); // the server stopping at teardown (57P01), should this test run out of time
    await reset.connect();
    const Database = (await built('database.js')).Database!;
    try {
      for (let round = 0; round < 100; round++) {
        await reset.query('DROP TABLE IF EXISTS accounts');
        const instances = Array.from({ length: 4 }, () => new Database({ databaseUrl: url, openDatabase: 'at-start' }) as Database);
        const started = await Promise.allSettled(instances.map((instance) => instance.onModuleInit()));
        await Promise.all(instances.map((instance) => instance.onApplicationShutdown()));
        expect(started.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
      }
    } finally {
      await reset.end();
    }
    // 100 rounds of 4 fresh connections each: about 12 s on a quiet 2-core machine, longer beside
    // the rest of the suite.
  }, 90_000);
});
