/** Every subpath export and what it must provide, as package.json's "exports" map lays them out. */
export const SUBPATHS: Record<string, string[]> = {
  'nestjs-redis-lock': ['RedisLockModule', 'LockService', 'Locked', 'WithoutOverlapping', 'OnOneInstance', 'LeaderElection', 'LeadershipService', 'RedisLockError', 'LOCK_DIAGNOSTICS_CHANNELS'],
  'nestjs-redis-lock/testing': ['RedisLockTestingModule', 'InMemoryLocks', 'ManualClock'],
  'nestjs-redis-lock/otel': ['enableLockMetrics', 'RedisLockMetricsModule'],
  'nestjs-redis-lock/terminus': ['RedisLockHealthIndicator'],
  'nestjs-redis-lock/board': ['RedisLockBoardModule'],
};
