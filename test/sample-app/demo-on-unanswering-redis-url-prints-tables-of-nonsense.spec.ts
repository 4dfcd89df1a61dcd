/**
 * Found by review (forty-first session, a newcomer whose Redis was not running): with REDIS_URL
 * naming a server that does not answer, `npm run demo` started its three instances anyway, and
 * after some forty seconds of their stack traces printed its tables as if it had run ("ran
 * undefined ms under a undefined ms lease", "stopping null moved the feed to nobody yet", the
 * locked rows "exact" with no deposit made) and "something is wrong". It now asks REDIS_URL for a
 * PING first and, without an answer, says in one line which URL did not answer and what to do.
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/redis-server.js';
import { runDemo } from './run-demo.js';

describe('npm run demo with a REDIS_URL nothing answers on', () => {
  it('says which URL did not answer and how to go on, and starts nothing', { timeout: 120_000 }, async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const { code, stdout, stderr } = await runDemo({ REDIS_URL: url });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toContain(`REDIS_URL=${url}`);
    expect(lines[0]).toContain('unset REDIS_URL');
  });
});
