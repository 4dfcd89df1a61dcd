/**
 * Review of d4beb2c (bounded release): a release pending on a frozen Redis keeps the held lock
 * on the deadline sweeper, and the release's promise open, until the reply or the lease's end.
 * An application that calls app.close() then must still exit on its own (no timer, socket or
 * promise left holding the event loop), within shutdownTimeout rather than the 30 s lease.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { useOwnRedis } from '../support/redis.js';

describe('a process closing its app while a release waits for a frozen Redis', () => {
  const own = useOwnRedis();
  afterEach(() => own.server().resume());

  it('exits on its own after app.close()', { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('../fixtures/close-with-release-pending-worker.mjs', import.meta.url))], {
      env: { ...process.env, REDIS_URL: own.url() },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exit: { code?: number | null } = {};
    child.on('exit', (code) => (exit.code = code));
    await expect.poll(() => output, { timeout: 10_000 }).toContain('acquired');
    own.server().pause();
    child.stdin.end('go\n');
    await expect.poll(() => output, { timeout: 10_000 }).toContain('closed');
    // Redis stays frozen: the lease (30 s) is far off.
    await expect.poll(() => exit, { timeout: 10_000 }).toEqual({ code: 0 });
    expect(output).toContain('release rejected');
  });
});
