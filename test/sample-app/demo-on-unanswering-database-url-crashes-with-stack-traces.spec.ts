/**
 * Found by review (forty-first session): with DATABASE_URL naming a PostgreSQL server that does
 * not answer, `npm run demo` crashed with the instances' unhandled pg errors and its own stack
 * trace ("The sample app exited before listening"), none of which named DATABASE_URL. It now
 * connects to it first and, when it cannot, says in one line which URL and what to do.
 */
import { describe, expect, it } from 'vitest';
import { redisUrl } from '../support/redis.js';
import { freePort } from '../support/redis-server.js';
import { runDemo } from './run-demo.js';

describe('npm run demo with a DATABASE_URL nothing answers on', () => {
  it('says which URL did not answer and how to go on, and starts nothing', { timeout: 120_000 }, async () => {
    const url = `postgres://demo:secret@127.0.0.1:${await freePort()}/demo`;
    const { code, stdout, stderr } = await runDemo({ REDIS_URL: redisUrl(), DATABASE_URL: url });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toContain('DATABASE_URL=postgres://demo:***@127.0.0.1:');
    expect(lines[0]).not.toContain('secret');
    expect(lines[0]).toContain('unset DATABASE_URL');
  });
});
