import { describe, expect, it } from 'vitest';
import { sleep, useLockApps } from './support/lock-app.js';
import { isScriptCall, lockScriptKind, watchCommands, type SeenCommand } from './support/monitor.js';
import { useRedis } from './support/redis.js';

/**
 * A grant that Redis made and that expired before the waiter's next attempt ran (its message
 * read late, after an event-loop stall) must not be handed out: that attempt's busy reply proves
 * someone else holds the lock now. Redis is driven by hand here, so that the order of grant,
 * expiry, busy reply and message is exact: the grant's lease "expires" (another holder takes
 * the lock with the next token) before the waiter's refresh, and its message comes after.
 */
describe('a grant whose message comes after a busy reply', () => {
  const redis = useRedis();
  const app = useLockApps();

  /** Resolves once `seen` has a call of `kind` by `token` past index `from`. */
  async function nextCall(seen: SeenCommand[], from: number, kind: string | undefined, token: string): Promise<number> {
    for (;;) {
      const index = seen.findIndex((command, i) => i >= from && isScriptCall(command) && (kind === undefined || lockScriptKind(command) === kind) && command.args.includes(token));
      if (index !== -1) return index;
      await sleep(10);
    }
  }

  it('is not handed out when a busy reply showed the lock taken since', async () => {
    const holder = await app({ ttl: 10_000 });
    const waiter = await app({ ttl: 10_000 });
    const base = (await holder.locks.acquire('k')).fencingToken;
    const commands = await watchCommands('lock:{k}');
    const acquiring = waiter.locks.acquire('k', { waitTimeout: 10_000 });
    let member: string | undefined;
    while (member === undefined) {
      member = (await redis.lrange('lock:{k}:queue', 0, 0))[0];
      if (member === undefined) await sleep(10);
    }
    const token = member.slice(0, member.lastIndexOf(':'));

    // A release handed the lock to the waiter (fencing token base + 1), its lease ran out unnoticed,
    // and D took the lock (token base + 2).
    expect(await redis.incr('lock:{k}:fence')).toBe(base + 1);
    await redis.set('lock:{k}', 'D', 'PX', 10_000);
    expect(await redis.incr('lock:{k}:fence')).toBe(base + 2);
    // The waiter's next refresh runs now and answers busy; then the grant's message arrives.
    const busy = await nextCall(commands.seen, commands.seen.length, 'acquire', token);
    // The waiter sent its next attempt, so it has read the busy reply of that one.
    const next = await nextCall(commands.seen, busy + 1, 'acquire', token);
    await redis.publish('lock:{k}:released', `${token}:${base + 1}`);
    // Let the message be read (the waiter goes on asking, unless it took the grant), then free
    // the lock: the waiter's next attempt takes it for real.
    await Promise.race([nextCall(commands.seen, next + 1, 'acquire', token), acquiring]);
    await redis.del('lock:{k}');
    const lock = await acquiring;
    await commands.stop();
    expect(lock.fencingToken).toBe(base + 3);
    expect(await redis.get('lock:{k}')).toBe(token);
    await lock.release();
  });

  it('is not handed out to a reader when a busy reply showed a writer in since', async () => {
    const holder = await app({ ttl: 10_000 });
    const waiter = await app({ ttl: 10_000 });
    const base = (await holder.locks.acquire('k')).fencingToken;
    const commands = await watchCommands('lock:{k}');
    const acquiring = waiter.locks.acquire('k', { mode: 'read', waitTimeout: 10_000 });
    const token = await queuedToken('lock:{k}:queue', 3);
    // The previous writer let this reader in (token base + 1), its lease ran out unnoticed, and
    // writer D took the lock (token base + 2).
    expect(await redis.incr('lock:{k}:fence')).toBe(base + 1);
    await redis.set('lock:{k}', 'D', 'PX', 10_000);
    expect(await redis.incr('lock:{k}:fence')).toBe(base + 2);
    const busy = await nextCall(commands.seen, commands.seen.length, undefined, token);
    const next = await nextCall(commands.seen, busy + 1, undefined, token);
    await redis.publish('lock:{k}:released', `${token}:${base + 1}`);
    // Unless it took the grant, the waiter goes on asking.
    await Promise.race([nextCall(commands.seen, next + 1, undefined, token), acquiring]);
    await redis.del('lock:{k}');
    const lock = await acquiring;
    await commands.stop();
    expect(lock.fencingToken).toBe(base + 3);
    expect(await redis.exists(`lock:{k}:reader:${token}`)).toBe(1);
    await lock.release();
  });

  it('is not handed out as a permit when a busy reply showed the permits taken since', async () => {
    const holder = await app({ ttl: 10_000 });
    const waiter = await app({ ttl: 10_000 });
    const held = await holder.locks.acquire('k', { limit: 1 });
    const base = held.fencingToken;
    // Outside a Cluster a semaphore's script calls name the caller's permit alone (`lock:{k}:permit:<token>`).
    const commands = await watchCommands('lock:{k}:sq', undefined, (arg) => arg.startsWith('lock:{k}:'));
    const acquiring = waiter.locks.acquire('k', { limit: 1, waitTimeout: 10_000 });
    const token = await queuedToken('lock:{k}:sq', 3);
    // A grant to this waiter (token base + 1) expired unnoticed, and another caller got the next one.
    expect(await redis.incr('lock:{k}:fence')).toBe(base + 1);
    expect(await redis.incr('lock:{k}:fence')).toBe(base + 2);
    const busy = await nextCall(commands.seen, commands.seen.length, undefined, token);
    const next = await nextCall(commands.seen, busy + 1, undefined, token);
    await redis.publish('lock:{k}:sr', `${token}:${base + 1}`);
    // Unless it took the grant, the waiter goes on asking.
    await Promise.race([nextCall(commands.seen, next + 1, undefined, token), acquiring]);
    await held.release();
    const lock = await acquiring;
    await commands.stop();
    expect(lock.fencingToken).toBe(base + 3);
    await lock.release();
  });

  /** The token of the first member of `queue`, a member being `<token>` and `parts` more fields. */
  async function queuedToken(queue: string, parts: number): Promise<string> {
    for (;;) {
      const member = (await redis.lrange(queue, 0, 0))[0];
      if (member !== undefined) return member.split(':').slice(0, -(parts - 1)).join(':');
      await sleep(10);
    }
  }
});
