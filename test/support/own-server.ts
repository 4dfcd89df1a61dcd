import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, type RedisServer } from './redis-server.js';

/**
 * A redis-server of the describe block's own (started with `args`) and an ioredis client of the
 * test's on it, for a test that changes the server's settings or users (CONFIG SET, ACL SETUSER),
 * which would change the shared test server under other files' feet.
 */
export function useOwnServer(args: string[] = []): { url(): string; admin(): Redis } {
  let server: RedisServer | undefined;
  let admin: Redis | undefined;
  beforeAll(async () => {
    server = await startRedisServer(args);
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    await admin?.quit();
    await server?.stop();
  });
  return { url: () => server!.url, admin: () => admin! };
}
