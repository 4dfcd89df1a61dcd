import { Redis } from 'ioredis';
import { beforeAll } from 'vitest';
import { InMemoryLocks } from '../../lib/testing/in-memory-locks.js';
import { redisUrl } from './redis.js';

// Run before each file of the `shared` project (vitest.config.ts), whose files share their
// worker's process with the files run before them there: the testing module's process-wide
// store (`InMemoryLocks.shared`, used by every RedisLockTestingModule given no store of its own)
// and the worker's database on the test server (redis.ts) start each file empty, as they do in
// a process of the file's own. A lock an earlier file left held on purpose (a crashed holder, a
// stolen lock, a client cut off while it held) would otherwise make the same key busy in a
// later one: a file locking "k" found it held by an earlier file's holder in wide runs.
beforeAll(async () => {
  InMemoryLocks.shared.clear();
  const redis = new Redis(redisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.flushdb();
  } finally {
    redis.disconnect();
  }
});
