/**
 * Found by review (thirty-fourth session): the sample app, which is what users copy, served
 * `GET /locks` (the locks the instance holds, with their fencing tokens) and `GET /locks/events`
 * (every lock event as it happens) to anyone: no guard, only the 127.0.0.1 it listens on, which
 * a copied `app.listen(port)` drops, and which a page of another site reaches anyway by DNS
 * rebinding. The routes are behind an `OperatorGuard` now (a bearer token from `LOCKS_TOKEN`,
 * no one without it), and `npm run demo` passes its own token.
 */
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnFixture } from '../support/fixture-process.js';

const main = new URL('../../sample-app/dist/main.js', import.meta.url);

/** The sample app on the in-memory store (no Redis, no database at start), with `env` added; its URL. */
async function startSample(env: Record<string, string>): Promise<string> {
  expect(existsSync(fileURLToPath(main)), 'the sample app is built (npm run build && npm run build:sample)').toBe(true);
  const app = spawnFixture(main, { LOCK_STORE: 'memory', PORT: '0', OPEN_DATABASE: 'lazy', INSTANCE: 'guarded', LOCKS_TOKEN: '', ...env });
  // However long its start takes on a loaded machine (the test's timeout bounds it).
  const [, url] = await app.line(/^sample-app listening on (\S+)$/);
  return url!;
}

/** Status (and, for a stream, its content type) of `path` with `token` (none: anonymous). */
async function ask(url: string, path: string, token?: string): Promise<{ status: number; type: string | null; body: string }> {
  const response = await fetch(`${url}${path}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  const type = response.headers.get('content-type');
  // A live feed never ends on its own.
  const body = type?.startsWith('text/event-stream') ? (await response.body?.cancel(), '') : await response.text();
  return { status: response.status, type, body };
}

describe('the sample app\'s /locks routes', () => {
  it('refuse a caller without the LOCKS_TOKEN bearer token and serve one with it', { timeout: 30_000 }, async () => {
    const token = randomUUID();
    const url = await startSample({ LOCKS_TOKEN: token });
    for (const path of ['/locks', '/locks/events']) {
      expect((await ask(url, path)).status, `${path} anonymous`).toBe(401);
      expect((await ask(url, path, 'not-the-token')).status, `${path} with another token`).toBe(401);
      expect((await ask(url, path, token.slice(0, -1))).status, `${path} with most of the token`).toBe(401);
    }
    const state = await ask(url, '/locks', token);
    expect(state.status).toBe(200);
    expect(JSON.parse(state.body)).toMatchObject({ counts: expect.any(Object), held: expect.any(Object) });
    expect(await ask(url, '/locks/events', token)).toMatchObject({ status: 200, type: expect.stringMatching(/^text\/event-stream/) });
    // The demo's other routes are the app's business, open as before.
    expect((await ask(url, '/jobs')).status).toBe(200);
  });

  it('let no one in while LOCKS_TOKEN is unset, and say what to set', { timeout: 30_000 }, async () => {
    const url = await startSample({});
    const refused = await ask(url, '/locks', '');
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).message).toContain('LOCKS_TOKEN');
    expect((await ask(url, '/locks/events')).status).toBe(401);
  });
});
