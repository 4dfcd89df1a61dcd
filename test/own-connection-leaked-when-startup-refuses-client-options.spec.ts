import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLockApp } from './support/lock-app.js';
import { redisUrl, useRedis } from './support/redis.js';

/**
 * Review (drivers): a connection the module opens itself is left open when the module then
 * refuses to start.
 *
 * Promise (docs/deployment.md, "Clients"; redis-backend.ts): connections made from URLs or
 * options are the module's own, and it closes them (`redisBackend` even closes the ones already
 * opened when a later quorum entry is refused); an ioredis client with `stringNumbers: true` is
 * refused at startup. A refused startup must not leave a socket behind: the process has to be
 * able to exit on its own.
 *
 * What happens: ioredis options with `stringNumbers: true` (the same options the docs accept,
 * `{ host, port, db, ... }`) get an ioredis connection of the module's own
 * (`openConnection`, redis-connection.ts:28), then `warnIfEvicting(clients)`
 * (redis-backend.ts:28) builds the driver (`driverFor` -> `IoRedisDriver` constructor,
 * ioredis-driver.ts:29-33), which throws. That call sits outside the `try` that closes the
 * opened connections (redis-backend.ts:19-26 and 38-43 guard only `openConnection` and
 * `new LockScripts`), so the startup fails and the module's connection stays connected, and
 * reconnecting, for the life of the process: nothing holds a reference to it any more.
 * The same happens in quorum mode (`['redis://a', 'redis://b', stringNumbersClient]`: the
 * URLs' connections are opened, then the third entry's driver throws in `warnIfEvicting`).
 */
describe('a connection of the module own, when the module then refuses to start', () => {
  const redis = useRedis();
  const leaked: Redis[] = [];

  afterEach(() => {
    vi.restoreAllMocks();
    for (const client of leaked.splice(0)) client.disconnect();
  });

  it('is closed when ioredis options with stringNumbers: true are refused', async () => {
    // Observe (not replace) the clients ioredis makes (each parses its options in its
    // constructor; the module's own is made unconnected, so no `connect()` marks it): the
    // module keeps none of them.
    const connect = vi.spyOn(Redis.prototype as unknown as { parseOptions(...args: unknown[]): void }, 'parseOptions');
    const { hostname, port, pathname } = new URL(redisUrl());
    const connectionName = `refused-${process.pid}-${Date.now()}`;
    const options = { host: hostname, port: Number(port), db: Number(pathname.slice(1)), connectionName, stringNumbers: true };

    await expect(createLockApp({ redis: options as never })).rejects.toThrow(/stringNumbers: true/);

    const opened = [...new Set(connect.mock.contexts as Redis[])].filter((client) => (client.options as { connectionName?: string }).connectionName === connectionName);
    connect.mockRestore();
    leaked.push(...opened);
    expect(opened).toHaveLength(1);
    const [own] = opened as [Redis];
    // Wait until the connection has settled one way or the other: closed (`end`) or connected (`ready`).
    await vi.waitFor(() => expect(['end', 'ready']).toContain(own.status), { timeout: 5_000 });
    // Current code: `ready`, and the server lists the connection by its name.
    expect(own.status).toBe('end');
    await vi.waitFor(async () => expect(String(await redis.client('LIST'))).not.toContain(`name=${connectionName}`));
  });
});
