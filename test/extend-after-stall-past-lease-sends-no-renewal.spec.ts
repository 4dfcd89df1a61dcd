import { describe, expect, it } from 'vitest';
import { LockLostError } from '../lib/index.js';
import { blockRedis } from './support/block-redis.js';
import { useLockApps } from './support/lock-app.js';
import { blockEventLoop } from './support/mechanism.js';
import { lockScriptKind, watchCommands } from './support/monitor.js';
import { useOwnRedis } from './support/redis.js';

/**
 * A review's suspicion (forty-fourth session), cleared: that `extend()` right after an event-loop
 * stall past the lease sends its renewal to Redis before it checks the lease's deadline, so that
 * it could renew a lock nobody took meanwhile back to life, or resolve for a lock whose `held`
 * read false a moment before. It does neither: the deadline is checked before the renewal is
 * numbered (held-lock.ts `beginRenewal`), the call rejects with the loss and sends nothing; and a
 * renewal that reaches Redis after the key expired there (sent in time, run late) renews nothing
 * (the renew script only PEXPIREs a key its owner still holds) and the call rejects.
 */
describe('extend() of a lock whose lease ran out while nobody took it', () => {
  // A server of its own: a case blocks it.
  const own = useOwnRedis();
  const apps = useLockApps();

  it('right after a stall past the lease rejects with the loss and sends no renewal', async () => {
    const { locks } = await apps({ redis: own.url(), ttl: 300, autoRenew: false });
    const lock = await locks.acquire('extend-after-stall');
    const watch = await watchCommands('lock:{extend-after-stall}', own.url());
    blockEventLoop(400);
    const outcome = await lock.extend(10_000).catch((error: unknown) => error);
    await watch.stop();
    expect(outcome).toBeInstanceOf(LockLostError);
    expect((outcome as LockLostError).reason).toBe('expired');
    expect(lock.held).toBe(false);
    expect(watch.seen.filter((command) => lockScriptKind(command) === 'renew')).toEqual([]);
    expect(await own.redis().exists('lock:{extend-after-stall}')).toBe(0);
  });

  it('whose renewal runs in Redis after the key expired there rejects, and the key stays gone', async () => {
    const { locks } = await apps({ redis: own.url(), ttl: 300, autoRenew: false });
    const lock = await locks.acquire('extend-run-late');
    const watch = await watchCommands('lock:{extend-run-late}', own.url());
    // Sent within the lease; Redis runs it only once the key's lease there is over.
    const { ended } = await blockRedis(own.url(), 600);
    const outcome = await lock.extend(10_000).catch((error: unknown) => error);
    const freeAt = await ended;
    await watch.stop();
    // Run (once loaded: a NOSCRIPT answer makes it two calls) after the block, past the key's lease.
    const renewals = watch.seen.filter((command) => lockScriptKind(command) === 'renew');
    expect(renewals.length).toBeGreaterThan(0);
    expect(renewals.every((command) => command.serverAt >= freeAt!)).toBe(true);
    expect(outcome).toBeInstanceOf(LockLostError);
    expect(lock.held).toBe(false);
    expect(await own.redis().exists('lock:{extend-run-late}')).toBe(0);
  });
});
