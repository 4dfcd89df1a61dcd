/**
 * Defect: `inspect()` of a key held by readers (`mode: 'read'`) fails for a Redis user allowed only
 * to read, although the docs say such a user is enough; on the lock board (which inspects every
 * lock it lists) the whole page then fails.
 *
 * Promise (docs/observability.md, "Who holds this lock: inspect()"): "`inspect()` reads with plain
 * commands (GET, PTTL, GET of the fence, ZCARD), one pipelined round trip ... a Redis user allowed
 * only to read is enough."
 *
 * What happens: `LockScripts.inspect` (lib/core/stores/redis/lock-scripts.ts:359) calls
 * `this.exists(keys.lock)` when the lock's value is `~r` (held by readers), and `exists` runs a
 * Lua script (EVALSHA/EVAL of HELD_SCRIPT). A user with only the `@read` commands gets NOPERM and
 * `inspect()` rejects. (docs/redis-data.md mentions "a read-only script", which still needs
 * EVALSHA: not what "allowed only to read" grants.)
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useLockApps } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('inspect() by a Redis user allowed only to read', () => {
  const own = useOwnRedis();
  const app = useLockApps();
  const user = `review-obs-ro-${process.pid}`;
  let admin: Redis;
  beforeEach(async () => {
    admin = new Redis(own.url());
    await admin.call('ACL', 'SETUSER', user, 'reset', 'on', '>pw', '~*', '+@read', '+@connection', '+info');
  });
  afterEach(async () => {
    await admin.call('ACL', 'DELUSER', user);
    await admin.quit();
  });

  it('reports a lock held by readers', async () => {
    const holder = await app({ redis: own.url() });
    const url = new URL(own.url());
    url.username = user;
    url.password = 'pw';
    const monitor = await app({ redis: url.toString() });
    const writer = await holder.locks.acquire('plain', { label: 'Writer.run' });
    const reader = await holder.locks.acquire('report', { mode: 'read', label: 'Reader.run' });
    // The plain reads work for this user:
    await expect(monitor.locks.inspect('plain')).resolves.toMatchObject({ held: true });
    // And a lock held by readers:
    await expect(monitor.locks.inspect('report')).resolves.toMatchObject({ key: 'report', held: true });
    await reader.release();
    await writer.release();
  });
});
