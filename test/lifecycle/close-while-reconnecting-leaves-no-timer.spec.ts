/**
 * Found by the chaos suite (`redis-kill.spec.ts`, a holder that lost its lock when Redis was
 * killed took 2 s to exit after app.close()): ioredis' `disconnect()` ends the socket and waits
 * up to its `disconnectTimeout` (2 s, a timer that keeps the process alive) for the socket to
 * close. A connection waiting to reconnect holds a socket that closed already, whose close never
 * comes again (redis/ioredis#1247). The library's own connections (its client made from a URL,
 * and its subscriber connection) must close without leaving that timer.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startRedisServer } from '../support/redis-server.js';

describe('app.close() while its connections wait to reconnect', () => {
  it('leaves nothing that keeps the process alive', { timeout: 30_000 }, async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop({ kill: true }).catch(() => undefined));
    const child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/close-while-reconnecting.mjs', import.meta.url))], {
      env: { ...process.env, REDIS_URL: server.url },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exit: { code?: number | null } = {};
    child.on('exit', (code) => (exit.code = code));
    await expect.poll(() => output, { timeout: 10_000 }).toContain('ready');
    await server.stop({ kill: true });
    child.stdin.end('go\n');
    await expect.poll(() => output, { timeout: 10_000 }).toMatch(/closed (\[.*\])/);
    const left = JSON.parse(/closed (\[.*\])/.exec(output)![1]!) as string[];
    expect(left.filter((resource) => resource !== 'PipeWrap' && resource !== 'TTYWrap')).toEqual([]);
    await expect.poll(() => exit, { timeout: 10_000 }).toEqual({ code: 0 });
  });
});
