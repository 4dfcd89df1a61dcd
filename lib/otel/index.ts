export { enableLockMetrics, UNNAMED_LOCK, type LockMetricsHandle, type LockMetricsOptions } from './lock-metrics.js';
export { RedisLockMetricsModule } from './redis-lock-metrics.module.js';
