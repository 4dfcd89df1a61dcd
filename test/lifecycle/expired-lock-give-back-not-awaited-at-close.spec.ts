import { describe, expect, it } from 'vitest';
import { firstValueFrom, filter } from 'rxjs';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { blockRedis } from '../support/block-redis.js';

// A lock lost as 'expired' (its lease ran out here while Redis was slow) is given back by
// HeldLock.lose() with a release nobody tracks: app.close() does not wait for it, although
// docs/configuration.md promises close waits up to shutdownTimeout "for Redis to take back held
// locks". The own connection is then disconnected with the release still unanswered.
describe('a lock lost as expired, then app.close()', () => {
  const own = useOwnRedis();

  it('waits for the give-back of the expired lock before it returns', async () => {
    const app = await createLockApp({ redis: own.url(), shutdownTimeout: 20_000 });
    const lost = firstValueFrom(app.locks.events$.pipe(filter((e) => e.type === 'lost')));
    const lock = await app.locks.acquire('expiring', { ttl: 1_000 });
    expect(await own.redis().get('lock:{expiring}')).not.toBeNull();
    // Redis serves nobody for 4 s (under its 5 s busy-script limit, so no BUSY replies): the renewals get no answer, the lease runs out here.
    const block = await blockRedis(own.url(), 4_000);
    const event = await lost;
    expect(event).toMatchObject({ key: 'expiring', reason: 'expired' });
    expect(lock.held).toBe(false);
    // The give-back lose() sent is now waiting behind the block; close with time to spare.
    await app.close();
    const closedAt = Date.now();
    const freeAt = await block.ended;
    expect(freeAt).toBeDefined();
    // close() returned while Redis was still blocked, so the release was never answered.
    expect(closedAt).toBeGreaterThanOrEqual(freeAt!);
  }, 30_000);
});
