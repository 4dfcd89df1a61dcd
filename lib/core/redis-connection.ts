import { Redis, type RedisOptions } from 'ioredis';
import type { RedisConnection } from '../interfaces/redis-lock-options.interface.js';
import type { LockLogger } from './lock-logger.js';
import type { RedisClient } from './lock-scripts.js';

/** A client and whether we opened it (and so must close it). */
export interface OpenedConnection {
  client: RedisClient;
  owned: boolean;
}

/** A client handed in is used as is; URLs and options get a connection of our own. */
export function openConnection(redis: RedisConnection, logger: LockLogger): OpenedConnection {
  if (isClient(redis)) return { client: redis, owned: false };
  const client = typeof redis === 'string' ? new Redis(redis) : new Redis(redis as RedisOptions);
  // Without a listener ioredis prints every reconnection failure; say it once per new message.
  let lastMessage = '';
  client.on('error', (error: Error) => {
    if (error.message === lastMessage) return;
    lastMessage = error.message;
    logger.warn(`Redis connection error: ${error.message}`);
  });
  client.on('ready', () => {
    lastMessage = '';
  });
  return { client, owned: true };
}

export function isClient(redis: unknown): redis is RedisClient {
  return typeof (redis as { defineCommand?: unknown } | null)?.defineCommand === 'function';
}
