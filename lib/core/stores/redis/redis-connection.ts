import { Redis, type RedisOptions } from 'ioredis';
import { InvalidLockOptionsError } from '../../../errors/invalid-lock-options.error.js';
import type { RedisConnection } from '../../../interfaces/redis-lock-options.interface.js';
import type { LockLogger } from '../../engine/lock-logger.js';
import { driverFor } from './drivers/driver-for.js';
import { isGlideClient } from './drivers/glide-client.js';
import { isIoRedisClient } from './drivers/ioredis-driver.js';
import { isNodeRedisClient, nodeRedisKind, speaksResp2 } from './drivers/node-redis-client.js';
import { CLOSE_WAIT_MS, disconnectPromptly, promptSentinelClients } from './drivers/ioredis-prompt-close.js';
import type { RedisClient } from './drivers/redis-client.js';

/** A client and, when we opened it, how to close it. */
export interface OpenedConnection {
  client: RedisClient;
  /** Present only for a connection of our own: a client handed in is never closed by us. */
  close?: () => void;
  /** Present only for a connection of our own, made unconnected: connects it, unless it did already (a first command does) or was closed. */
  connect?: () => void;
}

/** A client handed in (ioredis, iovalkey, node-redis or GLIDE) is used as is; URLs and options get an ioredis connection of our own. */
export function openConnection(redis: RedisConnection, logger: LockLogger, option = 'redis'): OpenedConnection {
  if (isNodeRedisClient(redis) && !redis.isOpen) {
    // Unlike ioredis, node-redis refuses every command of a client not connected yet.
    throw new InvalidLockOptionsError(option, redis, 'a connected node-redis client (`await client.connect()` before the application starts)');
  }
  if (nodeRedisKind(redis) === 'client' && typeof (redis as { duplicate?: unknown }).duplicate !== 'function') {
    // A pool (createClientPool()) has node-redis' command shape but no connection of its own to
    // subscribe on: every waiter's subscription would fail, and no release message would come.
    throw new InvalidLockOptionsError(option, redis, 'a node-redis client, cluster or Sentinel client; a client pool (createClientPool()) cannot carry release messages: hand in a createClient()');
  }
  if (nodeRedisKind(redis) === 'client' && (redis as { isPubSubActive?: unknown }).isPubSubActive === true && speaksResp2(redis as object)) {
    // Subscribed by the application under RESP2: Redis refuses every lock script on it ("Can't
    // execute 'evalsha'"), and every lock call would fail, as an ioredis client in subscriber mode's.
    throw new InvalidLockOptionsError(
      option,
      redis,
      'a node-redis client not in subscriber mode under RESP2, where Redis refuses every command but (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT and RESET (subscribe on a `duplicate()` of it, or create it with `RESP: 3`)',
    );
  }
  if (isGlideClient(redis) && (redis as { isClosed?: unknown }).isClosed === true) {
    // A closed GLIDE client is never opened again: every lock call would fail with its ClosingError.
    throw new InvalidLockOptionsError(option, redis, 'an open Valkey GLIDE client (this one was closed, and cannot be opened again)');
  }
  if (isClient(redis)) {
    // A client the library cannot work with (see the drivers) is refused here, naming its entry.
    driverFor(redis, option);
    return { client: redis };
  }
  if (typeof (redis as { sendCommand?: unknown }).sendCommand === 'function') {
    // Some other client: taken for ioredis options, it would connect to localhost instead.
    throw new InvalidLockOptionsError(option, redis, 'a redis:// URL, ioredis options, an ioredis or iovalkey client, a node-redis (v5, v6) client or a Valkey GLIDE client; this object looks like a Redis client of another kind');
  }
  // Made unconnected (`lazyConnect`): it connects when the application starts (`connect`, from
  // `LockService.onApplicationBootstrap`), or at a first command before. Nest runs no shutdown
  // hook for a startup that fails, and a provider of the application that throws in its
  // constructor or its `onModuleInit` would otherwise leave this connection open for good, the
  // process alive. ioredis gets the options given as the prototype of its own (it reads
  // inherited properties too), so it sees them as it would have.
  // `disconnectTimeout`: how long ioredis waits for Redis to close a socket it ended, at close and
  // when it leaves a master during the run (a failover its `failoverDetector` heard of, a
  // `reconnectOnError`). A frozen master never closes its side: the connection stayed on it
  // ioredis' 2 s (or the application's own timeout) after the failover, every lock call, renewal
  // and waiter with it. Nothing is written on a socket ioredis ended (see `CLOSE_WAIT_MS`). The
  // subscriber and `waitForReplicas` connections, duplicates of this one, have it too.
  const own = { lazyConnect: true, disconnectTimeout: CLOSE_WAIT_MS };
  const client = typeof redis === 'string' ? new Redis(redis, own) : new Redis(Object.assign(Object.create(redis as object) as RedisOptions, own));
  promptSentinelClients(client);
  const close = (): void => disconnectSettlingAll(client);
  try {
    driverFor(client, option);
  } catch (error) {
    close();
    throw error;
  }
  // Without a listener ioredis prints every reconnection failure; say it once per new message
  // (its numbers aside: a Sentinel connector's says how long until its next retry, a new delay
  // each time).
  let lastMessage = '';
  // A quorum's entry is named: a refused login, say, names no server, and any master may be it.
  const entry = option === 'redis' ? '' : ` (${option})`;
  client.on('error', (error: Error) => {
    const message = error.message.replace(/\d+/g, '#');
    if (message === lastMessage) return;
    lastMessage = message;
    logger.warn(`Redis connection error${entry}: ${error.message}`);
  });
  client.on('ready', () => {
    lastMessage = '';
  });
  // Under `enableOfflineQueue: false` ioredis refuses a command sent before the connection is
  // ready, which a connection made unconnected is until the application starts: a lock call of an
  // `onModuleInit` would always be refused, and the first calls after the start often. Until it is
  // first ready (new, not down) it queues them; the application's choice holds from then on.
  const options = client.options as { enableOfflineQueue?: boolean };
  if (options.enableOfflineQueue === false) {
    options.enableOfflineQueue = true;
    client.once('ready', () => {
      options.enableOfflineQueue = false;
    });
  }
  const connect = (): void => {
    // A failure is an `error` event, said above; ioredis then retries as after any drop.
    if (client.status === 'wait') client.connect().catch(() => undefined);
  };
  return { client, close, connect };
}

/** ioredis' queue of commands sent before a ready connection closed (not in its typings). */
interface ResendQueue {
  length: number;
  shift(): { command: { reject(error: Error): void } } | undefined;
}

/**
 * Disconnects, and rejects the commands ioredis holds to resend once a connection that closed
 * is ready again: `disconnect()` before that rejects every other queue but leaves those pending
 * for ever (a release sent as the connection dropped never settled, nor did the call awaiting it).
 * A Redis down or frozen does not keep the process alive after it (see `disconnectPromptly`).
 */
function disconnectSettlingAll(client: Redis): void {
  disconnectPromptly(client);
  const stuck = (client as unknown as { prevCommandQueue?: ResendQueue | null }).prevCommandQueue;
  if (stuck == null) return;
  for (let item = stuck.shift(); item !== undefined; item = stuck.shift()) item.command.reject(new Error('Connection is closed.'));
}

/** An ioredis, iovalkey, node-redis or GLIDE client (by its shape: `redis` is never imported here). */
export function isClient(redis: unknown): redis is RedisClient {
  return isIoRedisClient(redis) || isNodeRedisClient(redis) || isGlideClient(redis);
}
