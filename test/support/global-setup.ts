import type { TestProject } from 'vitest/node';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { removeGlideSocketsSince } from './glide-sockets.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let server: RedisServer | undefined;

/**
 * One redis-server for the whole run (or the one REDIS_URL names). Each test worker uses its
 * own logical database (see redis.ts), so parallel test files never flush each other's keys.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const startedAt = Date.now();
  let url = process.env.REDIS_URL;
  if (!url) {
    server = await startRedisServer();
    url = server.url;
  }
  // Start without cached scripts, so the EVALSHA -> NOSCRIPT -> EVAL path runs at least once.
  const admin = new Redis(url);
  await admin.script('FLUSH');
  await admin.quit();
  project.provide('redisUrl', url);
  return async () => {
    await server?.stop();
    // The test workers (forks) still run here; they are gone once vitest exits.
    process.once('exit', () => removeGlideSocketsSince(startedAt));
  };
}
