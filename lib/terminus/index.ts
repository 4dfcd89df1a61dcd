export { RedisLockHealthIndicator, type RedisLockHealthOptions, type RedisLockNodeHealth } from './redis-lock.health.js';
