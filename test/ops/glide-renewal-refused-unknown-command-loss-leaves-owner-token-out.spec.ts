import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { handedLockApp, openClient } from '../support/handed-clients.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * Review suspicion (drivers), cleared. GLIDE sends a script's first call as EVAL and its later
 * ones as EVALSHA (see glide-driver.ts `loaded`): on a server with EVALSHA renamed away a lock is
 * taken, and its renewals are then refused with "unknown command 'EVALSHA', with args beginning
 * with:" and the call's first arguments, the lock's key and owner token among them. GLIDE's core
 * prints that reply on its own log (`logger_core`, WARN; docs/deployment.md says so). What the
 * library hands out and logs of it (the LockLostError and its causes, as util.inspect prints them,
 * and its error log line) leaves the echo out, as test/ops/script-command-unknown-to-server-error-shows-owner-token.spec.ts
 * shows for lock calls.
 */
describe('a GLIDE client on a server with EVALSHA renamed away', () => {
  const server = useOwnServer(['--rename-command', 'EVALSHA', '']);

  it("loses a held lock at its first renewal refused, without its owner token in the error or the library's log", { timeout: 30_000 }, async () => {
    const app = await handedLockApp(await openClient('GLIDE', server.url()), { shutdownTimeout: 1_000 });
    try {
      const lock = await app.locks.acquire('renamed-renewal', { ttl: 60_000, renewInterval: 200 });
      const token = (lock as unknown as { token: string }).token;
      await expect.poll(() => lock.signal.aborted, { timeout: 10_000 }).toBe(true);
      const error = lock.signal.reason as LockLostError;
      expect(error).toBeInstanceOf(LockLostError);
      expect(error.reason).toBe('refused');
      const printed = inspect(error, { depth: 8 });
      expect(printed).toMatch(/unknown command 'EVALSHA'/);
      expect(printed).not.toContain('with args beginning with');
      // A prefix of the token, as the echo would cut it (Redis echoes up to 128 characters).
      expect(printed).not.toContain(token.slice(0, 40));
      const logged = app.logs.lines.map((line) => line.message);
      expect(logged.some((line) => line.includes('renamed-renewal') && /lost/.test(line))).toBe(true);
      expect(logged.filter((line) => line.includes(token.slice(0, 40)))).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
