export { enableLockMetrics, LOCK_DURATION_BUCKETS, UNNAMED_LOCK, type LockMetricsHandle, type LockMetricsOptions } from './lock-metrics.js';
export { RedisLockMetricsModule } from './redis-lock-metrics.module.js';
