/**
 * Found by review (thirty-eighth session): the sample app, which is what users copy, took every
 * number and name of a request as it came:
 * - `POST /reports/<name>?duration=<ms>` ran (and held the report's lock, renewed) for any
 *   duration, a day or a negative one; a client could hold many such locks for ever, one per name;
 * - `POST /accounts/<id>/deposit-stalled?stallMs=<ms>` slept for any time in its handler;
 * - deposits took any integer amount: negative (a withdrawal through `deposit`), or beyond what a
 *   JavaScript number adds exactly (a balance computed wrong, or the database's 500);
 * - names and ids of any length and characters went into lock keys and rows.
 * Each is now bounded and refused with 400 naming the value, before any lock or query.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';

const main = new URL('../../sample-app/dist/main.js', import.meta.url);

/** The sample app on the in-memory store, its database opened at the first balance request; its URL. */
async function startSample(): Promise<string> {
  expect(existsSync(fileURLToPath(main)), 'the sample app is built (npm run build && npm run build:sample)').toBe(true);
  const app = spawnFixture(main, { LOCK_STORE: 'memory', PORT: '0', OPEN_DATABASE: 'lazy', INSTANCE: 'bounds', LOCKS_TOKEN: '' });
  // However long its start takes on a loaded machine (the test's timeout bounds it).
  const [, url] = await app.line(/^sample-app listening on (\S+)$/);
  return url!;
}

/**
 * The status and message of a POST; `'no answer'` if none came within 3 s (a refusal comes at
 * once, before any handler runs: a handler sleeping or holding a lock answers late or never).
 */
async function post(url: string, path: string, body?: unknown): Promise<{ status: number | 'no answer'; message?: string }> {
  try {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
      signal: AbortSignal.timeout(3_000),
    });
    const text = await response.text();
    return { status: response.status, message: (JSON.parse(text) as { message?: string }).message };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return { status: 'no answer' };
    throw error;
  }
}

describe('the sample app bounds what a request asks for', () => {
  it('refuses report durations out of range and report names no lock key should hold', { timeout: 30_000 }, async () => {
    const url = await startSample();
    for (const duration of ['86400000', '-1', '1.5', '9'.repeat(30)]) {
      const answer = await post(url, `/reports/r?duration=${duration}`);
      expect(answer, `duration=${duration}`).toMatchObject({ status: 400, message: expect.stringContaining('duration') });
    }
    for (const name of ['x'.repeat(65), '%3Cscript%3E', 'a%20b']) {
      expect(await post(url, `/reports/${name}?duration=10`), `name ${name}`).toMatchObject({ status: 400, message: expect.stringContaining('name') });
    }
    // A report in range runs as before.
    expect(await post(url, '/reports/ok?duration=10')).toMatchObject({ status: 201 });
  });

  it('refuses stalls, amounts and account ids out of range, before any lock or query', { timeout: 30_000 }, async () => {
    const url = await startSample();
    for (const stallMs of ['600000', '-5']) {
      const answer = await post(url, `/accounts/a/deposit-stalled?stallMs=${stallMs}`, { amount: 1 });
      expect(answer, `stallMs=${stallMs}`).toMatchObject({ status: 400, message: expect.stringContaining('stallMs') });
    }
    for (const amount of [-5, 0, 1e20, 2.5, '12abc']) {
      for (const route of ['deposit', 'deposit-now', 'deposit-unsafe']) {
        const answer = await post(url, `/accounts/a/${route}`, { amount });
        expect(answer, `${route} amount ${amount}`).toMatchObject({ status: 400, message: expect.stringContaining('amount') });
      }
    }
    for (const id of ['x'.repeat(65), '%3Cb%3E', 'a%0Ab']) {
      expect(await post(url, `/accounts/${id}/deposit`, { amount: 1 }), `id ${id}`).toMatchObject({ status: 400, message: expect.stringContaining('id') });
    }
  });
});
