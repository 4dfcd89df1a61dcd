export { assertRedisInstalled, freePort, startRedisServer, type RedisServer } from '../../scripts/redis-server.mjs';
