/**
 * Review (fencing, sample app): a deposit is bounded (1 to 1e9) so that JavaScript adds it
 * exactly, but the balance it is added to is not: the `bigint` column holds up to 2^63 - 1, the
 * app reads it as a JavaScript number and adds there, exact only up to 2^53 - 1. A balance past
 * that (nine million deposits of the largest amount, or an account written by another tool) was
 * read and added inexactly, and written back: `POST /accounts/big/deposit {"amount": 2}` on a
 * balance of 2^53 - 1 answered 201 with 9007199254740992 and wrote it, one short of the true sum,
 * so the routes that exist to show exact balances lost money without a word. A deposit whose sum
 * JavaScript cannot add exactly is refused (409), nothing written.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';
import { startPostgresServer, type PostgresServer } from '../support/postgres-server.js';

const main = new URL('../../sample-app/dist/main.js', import.meta.url);
const LARGEST = '9007199254740991'; // 2^53 - 1, exact in a JavaScript number

describe('a deposit on a balance past what a JavaScript number adds exactly', () => {
  let server: PostgresServer;
  let admin: pg.Pool;
  beforeAll(async () => {
    server = await startPostgresServer();
    admin = new pg.Pool({ connectionString: server.url });
    admin.on('error', () => undefined);
  }, 60_000);
  afterAll(async () => {
    await admin?.end();
    await server?.stop();
  });

  it.each(['deposit', 'deposit-unsafe', 'deposit-stalled?stallMs=0'])('POST /accounts/<id>/%s is refused with 409, the balance left as it was', { timeout: 30_000 }, async (route) => {
    expect(existsSync(fileURLToPath(main)), 'the sample app is built (npm run build && npm run build:sample)').toBe(true);
    const app = spawnFixture(main, { LOCK_STORE: 'memory', PORT: '0', DATABASE_URL: server.url, INSTANCE: 'past-2-53', LOCKS_TOKEN: '' });
    // However long its start takes on a loaded machine (the test's timeout bounds it).
    const [, url] = await app.line(/^sample-app listening on (\S+)$/);
    const id = `big-${route.replace(/\W/g, '-')}`;
    await admin.query('INSERT INTO accounts (id, balance, fence) VALUES ($1, $2, 0) ON CONFLICT (id) DO UPDATE SET balance = EXCLUDED.balance, fence = 0', [id, LARGEST]);
    const response = await fetch(`${url}/accounts/${id}/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 2 }) });
    const body = (await response.json()) as { balance?: number; message?: string };
    const { rows } = await admin.query<{ balance: string }>('SELECT balance FROM accounts WHERE id = $1', [id]);
    expect({ status: response.status, balance: rows[0]!.balance }).toEqual({ status: 409, balance: LARGEST });
    expect(body.message).toContain('2^53');
  });
});
