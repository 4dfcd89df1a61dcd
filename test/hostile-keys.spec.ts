import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../lib/index.js';
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
