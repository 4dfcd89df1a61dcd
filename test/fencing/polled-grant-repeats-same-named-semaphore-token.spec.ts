import { describe, expect, it } from 'vitest';
import { useLockApps } from '../support/lock-app.js';
import { countAttempts, holdPolls } from '../support/mechanism.js';
import { useRedis } from '../support/redis.js';

/**
 * A mutex and a semaphore of one name share the fencing counter (`<lock>:fence`), so that their
 * tokens never repeat. A waiter that missed its grant's message took the lock at its next poll,
 * whose acquire found the key holding its own token and answered the counter as it stood: after
 * a permit of the same-named semaphore had taken the next token, the permit holder's token. Both
 * then held one token, and a fenced resource accepted the writes of both. Found by review
 * (thirty-third session); the poll now takes the next token, as a first grant does. Redis is
 * driven by hand for the release, so that the waiter surely misses its message (no PUBLISH) and
 * the permit is taken before the poll (the waiter's polls are held until then).
 */
describe('a mutex grant a waiter learns of by polling, beside a same-named semaphore', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('gets a token of its own, above the permit holder\'s', async () => {
    const waiter = await app({ ttl: 10_000 });
    const other = await app({ ttl: 10_000 });
    await redis.set('lock:{k}:fence', '10'); // the key was locked ten times before
    await redis.set('lock:{k}', 'another-process', 'PX', 10_000);
    const polls = holdPolls(waiter.locks);
    const attempts = countAttempts(waiter.locks);
    const acquiring = waiter.locks.acquire('k', { waitTimeout: 20_000 });
    // Queued, subscribed, and asleep until a release message (its polls are held).
    await attempts.listening();
    const [member] = await redis.lrange('lock:{k}:queue', 0, 0);
    const token = member!.slice(0, member!.lastIndexOf(':'));

    // The holder's release hands the lock to the waiter as RELEASE does (grant_next: the lock
    // under its token, the next fencing token, out of the queue), and its message is lost (the
    // waiter's subscriber reconnecting, say). A lease longer than a grant's 1 s: the spec does
    // not race it.
    const grant = `redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local fencing = redis.call('INCR', KEYS[2])
redis.call('LPOP', KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[3])
return fencing`;
    expect(await redis.eval(grant, 4, 'lock:{k}', 'lock:{k}:fence', 'lock:{k}:queue', 'lock:{k}:waiters', token, 10_000, member!)).toBe(11);
    // A semaphore of the same name takes a permit, with the next token.
    const permit = await other.locks.acquire('k', { limit: 2 });
    expect(permit.fencingToken).toBe(12);

    // The waiter polls and finds the lock its own.
    polls.resume();
    const lock = await acquiring;
    attempts.stop();
    expect(await redis.get('lock:{k}')).toBe(token);
    expect(lock.fencingToken).toBeGreaterThan(permit.fencingToken);
    await lock.release();
    await permit.release();
  });
});
