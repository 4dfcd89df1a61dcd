import { beforeAll } from 'vitest';
import { InMemoryLocks } from '../../lib/testing/in-memory-locks.js';

// Run before each file of the `shared` project (vitest.config.ts), whose files share their
// worker's process with the files run before them there: the testing module's process-wide
// store (`InMemoryLocks.shared`, used by every RedisLockTestingModule given no store of its own)
// starts each file empty, as it does in a process of the file's own. A lock an earlier file
// left held on purpose (a crashed holder, a stolen lock) would otherwise make the same key busy
// in a later one.
beforeAll(() => {
  InMemoryLocks.shared.clear();
});
