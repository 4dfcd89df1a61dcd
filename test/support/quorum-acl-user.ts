import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createLockApp, type LockApp } from './lock-app.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/** Three masters whose lock app connects as a Redis user of the test's own (see `useQuorumAclUser`). */
export interface QuorumAclUser {
  /** The masters, started before the first test. */
  readonly servers: readonly RedisServer[];
  /** A connection of the test's own (the default user) to each master. */
  readonly admins: readonly Redis[];
  /**
   * A lock app over the three masters, connected as the user, made on each with every permission
   * to start with; closed after the test (the user deleted and the masters flushed then).
   */
  app(options?: Parameters<typeof createLockApp>[0]): Promise<LockApp>;
  /** Sets ACL `rules` of the user on the masters `masters` (indexes): '-evalsha', 'resetkeys'. */
  rules(masters: readonly number[], ...rules: string[]): Promise<unknown>;
}

/**
 * Three independent masters, started once per file, for a quorum spec that makes some of them
 * refuse the module's commands for good while it runs: its lock app connects as an ACL user of
 * the test's own, which the test takes a command or the lock's keys away from on a majority, or
 * a minority, of them. After each test the app is closed, the user deleted and what the refused
 * locks left on the masters flushed, not to be found by a run again of the test.
 */
export function useQuorumAclUser(name: string): QuorumAclUser {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  const user = `${name}-${process.pid}`;
  let app: LockApp | undefined;
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1, 2].map(() => startRedisServer()))));
    admins.push(...servers.map((server) => new Redis(server.url)));
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await Promise.all(admins.map((admin) => admin.call('ACL', 'DELUSER', user)));
    await Promise.all(admins.map((admin) => admin.flushall()));
  });
  afterAll(async () => {
    await Promise.all(admins.map((admin) => admin.quit()));
    await Promise.all(servers.map((server) => server.stop()));
  });
  const rules = (masters: readonly number[], ...set: string[]): Promise<unknown> => Promise.all(masters.map((i) => admins[i]!.call('ACL', 'SETUSER', user, ...set)));
  return {
    servers,
    admins,
    rules,
    async app(options = {}) {
      await rules([0, 1, 2], 'reset', 'on', '>pw', '~*', '&*', '+@all');
      const urls = servers.map((server) => {
        const url = new URL(server.url);
        url.username = user;
        url.password = 'pw';
        return url.toString();
      });
      app = await createLockApp({ redis: urls as never, shutdownTimeout: 1_000, ...options });
      return app;
    },
  };
}
