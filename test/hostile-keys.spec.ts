import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockUpgradeError, SemaphoreLimitError } from '../lib/index.js';
import { nextEvent, useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

const HOSTILE = `x"\n[Nest] 1  - ERROR [RedisLock] forged line\u001b[31m<script>alert(1)</script>${'y'.repeat(900)}`;

describe('a hostile key in errors and logs', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('is escaped and bounded in LockNotAcquiredError and in the lost-lock log line', async () => {
    const holder = await app({ ttl: 300, renewInterval: 100 });
    const held = await holder.locks.acquire(HOSTILE);
    const error = await holder.locks.acquire(HOSTILE, { waitTimeout: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message.length).toBeLessThan(500);
    expect((error as LockNotAcquiredError).key).toBe(HOSTILE); // the key itself stays exact
    // Another party deletes it: the next renewal is refused, and the log line about the loss
    // stays one bounded line.
    const lost = nextEvent(holder.locks.events$, 'lost');
    await redis.del(`lock:{${HOSTILE}}`);
    await lost;
    expect(held.signal.aborted).toBe(true);
    const line = holder.logs.lines.find((entry) => entry.message.includes('lock lost'))!;
    expect(line.message).not.toContain('\n');
    expect(line.message.length).toBeLessThan(700);
  });
});

describe('hostile keys for the lock family', () => {
  useRedis();
  const app = useLockApps();
  // Brace games and the family's own suffixes inside the key: the names derived from it must
  // stay in its slot and apart from other keys.
  const KEYS = ['}{x}:holders', '\\:reader:abc', 'a:sq:permit:}', HOSTILE];

  it('is escaped in SemaphoreLimitError and LockUpgradeError, and every kind works on such keys', async () => {
    const { locks } = await app();
    for (const key of KEYS) {
      const permits = await Promise.all([locks.acquire(key, { limit: 2 }), locks.acquire(key, { limit: 2 })]);
      expect(await locks.tryAcquire(key, { limit: 2 })).toBeNull();
      const mismatch = (await locks.acquire(key, { limit: 3 }).catch((e: unknown) => e)) as Error;
      expect(mismatch).toBeInstanceOf(SemaphoreLimitError);
      expect(mismatch.message).not.toContain('\n');
      expect(mismatch.message.length).toBeLessThan(500);
      await Promise.all(permits.map((permit) => permit.release()));

      const upgrade = (await locks.using(key, () => locks.acquire(key).catch((e: unknown) => e), { mode: 'read' })) as Error;
      expect(upgrade).toBeInstanceOf(LockUpgradeError);
      expect(upgrade.message).not.toContain('\n');
      expect(upgrade.message.length).toBeLessThan(600);

      const both = await locks.acquire([key, `${key}:other`], { waitTimeout: 0 });
      expect(both.keys).toContain(key);
      await both.release();
      expect(await locks.isLocked(key)).toBe(false);
    }
  });
});
