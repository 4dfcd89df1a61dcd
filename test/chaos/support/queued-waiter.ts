import type { Redis } from 'ioredis';
import { sleep } from '../../support/lock-app.js';

/** The owner token of the first waiter in `lock`'s queue, once one has queued. */
export async function queuedWaiterToken(redis: Redis, lock: string): Promise<string> {
  for (;;) {
    const member = (await redis.lrange(`${lock}:queue`, 0, 0))[0];
    // A member is `<token>:<ttl>`.
    if (member !== undefined) return member.slice(0, member.lastIndexOf(':'));
    await sleep(10);
  }
}
