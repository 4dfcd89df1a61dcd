import { Redis } from 'ioredis';
import type { RedisLockModuleOptions } from '../../lib/index.js';
import { openClient } from './handed-clients.js';
import { nodeRedisClient } from './node-redis.js';

/** A client the test hands in, and how its owner closes it (`quit()`, `close()`). */
export interface OwnedClient {
  readonly client: RedisLockModuleOptions['redis'];
  close(): unknown;
}

/**
 * A connected client of each package the library accepts, opened on `url` for a test that closes
 * it as its owner would (in an `onModuleDestroy`, or while the application runs).
 */
export const OWNER_CLOSED_CLIENTS: Record<string, (url: string) => Promise<OwnedClient>> = {
  ioredis: async (url) => {
    const client = new Redis(url);
    client.on('error', () => undefined);
    await client.ping();
    return { client, close: () => client.disconnect() };
  },
  /**
   * quit() resolves on Redis' OK, before the socket closes: the client is still `ready` then, only
   * ioredis' `manuallyClosing` says it is closing (what the module reads as closed; a quit() Redis
   * refused leaves that flag set too, and ioredis ends such a client at its next drop).
   */
  'ioredis quit()': async (url) => {
    const client = new Redis(url);
    client.on('error', () => undefined);
    await client.ping();
    return { client, close: () => client.quit() };
  },
  'node-redis 6': async (url) => {
    const client = await nodeRedisClient(url, 6);
    return { client: client as unknown as RedisLockModuleOptions['redis'], close: () => client.close() };
  },
  GLIDE: async (url) => {
    const handed = await openClient('GLIDE', url);
    return { client: handed.client, close: () => handed.close() };
  },
};
