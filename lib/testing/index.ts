export { RedisLockTestingModule, type RedisLockTestingModuleOptions, type RedisLockTestingOptions } from './redis-lock-testing.module.js';
export { InMemoryLocks, type InMemoryLocksOptions } from './in-memory-locks.js';
export { ManualClock } from './manual-clock.js';
