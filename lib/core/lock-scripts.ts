import type { Cluster, Redis } from 'ioredis';

/**
 * Acquire in one round trip. KEYS: lock, fence. ARGV: owner token, ttl.
 * Returns `{1, fencingToken}` on success, `{0, pttl}` when busy (pttl is -1 for a key
 * someone set without expiry).
 */
const ACQUIRE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('INCR', KEYS[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
`;

/** KEYS: lock. ARGV: owner token, ttl. Returns 1 when renewed, 0 when not the owner. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

/**
 * KEYS: lock, release channel (declared as a key so that it is routed and ACL-checked with the
 * lock). ARGV: owner token. Returns 1 when released, 0 when not the owner.
 */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[2], '')
  return 1
end
return 0
`;

const ACQUIRE_COMMAND = 'nestjsRedisLockAcquire';
const RENEW_COMMAND = 'nestjsRedisLockRenew';
const RELEASE_COMMAND = 'nestjsRedisLockRelease';

/** The commands `defineLockScripts` adds to a client, typed here instead of augmenting ioredis. */
interface LockScriptCommands {
  [ACQUIRE_COMMAND](lock: string, fence: string, token: string, ttl: number): Promise<[0 | 1, number]>;
  [RENEW_COMMAND](lock: string, token: string, ttl: number): Promise<0 | 1>;
  [RELEASE_COMMAND](lock: string, channel: string, token: string): Promise<0 | 1>;
}

export type RedisClient = Redis | Cluster;

/** Outcome of one acquire attempt. */
export type AcquireReply = { acquired: true; fencingToken: number } | { acquired: false; pttl: number };

/**
 * The lock protocol over one client. Scripts are registered with `defineCommand`, which sends
 * EVALSHA and falls back to EVAL when the server answers NOSCRIPT.
 */
export class LockScripts {
  private readonly commands: LockScriptCommands;

  constructor(readonly client: RedisClient) {
    client.defineCommand(ACQUIRE_COMMAND, { numberOfKeys: 2, lua: ACQUIRE });
    client.defineCommand(RENEW_COMMAND, { numberOfKeys: 1, lua: RENEW });
    client.defineCommand(RELEASE_COMMAND, { numberOfKeys: 2, lua: RELEASE });
    this.commands = client as unknown as LockScriptCommands;
  }

  async acquire(lock: string, fence: string, token: string, ttl: number): Promise<AcquireReply> {
    const [ok, value] = await this.commands[ACQUIRE_COMMAND](lock, fence, token, ttl);
    return ok === 1 ? { acquired: true, fencingToken: value } : { acquired: false, pttl: value };
  }

  async renew(lock: string, token: string, ttl: number): Promise<boolean> {
    return (await this.commands[RENEW_COMMAND](lock, token, ttl)) === 1;
  }

  async release(lock: string, channel: string, token: string): Promise<boolean> {
    return (await this.commands[RELEASE_COMMAND](lock, channel, token)) === 1;
  }

  async exists(lock: string): Promise<boolean> {
    return (await this.client.exists(lock)) === 1;
  }
}
