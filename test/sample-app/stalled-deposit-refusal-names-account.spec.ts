/**
 * Review (HTTP answers, sample app): `POST /accounts/<id>/deposit-stalled` caught the
 * `FencedWriteRefusedError` of its late write itself and threw `new ConflictException(error.message)`,
 * a catch the library's interceptor made redundant (it answers that error 409 since d220409), and
 * one that undid what the interceptor keeps: its answer named the resource, `accounts/<id>` from
 * the request's path, in an application that did not set `exposeKeyInHttpErrors`, and showed a
 * client the fencing tokens. The sample, which is what users copy, now lets the error through:
 * 409, without the account's name, as every other deposit route answers it.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';

const main = new URL('../../sample-app/dist/main.js', import.meta.url);
const TOKEN = 'stalled-deposit-operator';

describe('a stalled deposit whose late write the database refuses', () => {
  it('is answered 409 without the account id or the fencing tokens', { timeout: 120_000 }, async () => {
    expect(existsSync(fileURLToPath(main)), 'the sample app is built (npm run build && npm run build:sample)').toBe(true);
    const app = spawnFixture(main, { LOCK_STORE: 'memory', PORT: '0', OPEN_DATABASE: 'lazy', INSTANCE: 'stalled-refusal', LOCKS_TOKEN: TOKEN });
    // However long its start takes on a loaded machine (the test's timeout bounds it).
    const [, url] = await app.line(/^sample-app listening on (\S+)$/);
    // The database opens at the first balance request: before the stalled deposit, not under its lease.
    expect((await fetch(`${url}/accounts/warm-up`)).status).toBe(200);
    const id = 'acct-named-by-request-7';
    const post = (route: string) => fetch(`${url}/accounts/${id}/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 5 }) });
    // The stalled deposit holds the account's lock (500 ms, not renewed) past its lease.
    const stalled = post('deposit-stalled?stallMs=3000');
    await expect
      .poll(async () => JSON.stringify(await (await fetch(`${url}/locks`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()), { timeout: 10_000 })
      .toContain(id);
    // A deposit waits for the lease to run out, claims the row and writes: the stalled write comes after it.
    const rival = await post('deposit');
    expect(rival.status).toBe(201);
    const refused = await stalled;
    const body = (await refused.json()) as { message?: string };
    expect(refused.status).toBe(409);
    expect(body.message).not.toContain(id);
    expect(body.message).not.toMatch(/fencing token \d/);
  });
});
