import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { openClient } from './handed-clients.js';
import { nodeRedisClient } from './node-redis.js';

/** A client a test opened on a server, and how it closes it. */
export type OpenedOnUrl = { client: unknown; close(): Promise<unknown> };

/**
 * Each client the library accepts, opened on a `redis://` URL with its user and password (an ACL
 * user's): what the specs that try one refusal through every driver hand to `FencedRedis` or the
 * module. GLIDE takes its credentials apart (it reads no URL); its request timeout is the handed
 * clients' (see handed-clients.ts).
 */
export const CLIENTS_ON_URL: Record<'ioredis' | 'ioredis 6' | 'iovalkey' | 'node-redis' | 'GLIDE', (url: string) => Promise<OpenedOnUrl>> = {
  ioredis: async (url) => {
    const client = new Redis(url);
    client.on('error', () => undefined);
    return { client, close: async () => client.disconnect() };
  },
  'ioredis 6': async (url) => {
    const handed = await openClient('ioredis 6', url);
    return { client: handed.client, close: async () => handed.close() };
  },
  iovalkey: async (url) => {
    const handed = await openClient('iovalkey', url);
    return { client: handed.client, close: async () => handed.close() };
  },
  'node-redis': async (url) => {
    const client = await nodeRedisClient(url);
    return { client, close: () => client.close() };
  },
  GLIDE: async (url) => {
    const { hostname, port, username, password } = new URL(url);
    const client = await GlideClient.createClient({
      addresses: [{ host: hostname, port: Number(port) }],
      requestTimeout: 2_000,
      ...(username === '' ? {} : { credentials: { username: decodeURIComponent(username), password: decodeURIComponent(password) } }),
    });
    return { client, close: async () => client.close() };
  },
};
