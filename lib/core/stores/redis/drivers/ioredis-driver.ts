import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { COMMANDS, type ScriptName } from '../lock-lua.js';
import type { BareScriptCall, LuaScript, RedisDriver, RedisNode, ReleaseSubscriber, ScriptCall } from './redis-driver.js';

export type IoRedisClient = Redis | Cluster;

type Eval = (script: string, numberOfKeys: number, ...args: (string | number)[]) => Promise<unknown>;

/** An ioredis client: it alone has `defineCommand`. */
export function isIoRedisClient(client: unknown): client is IoRedisClient {
  return typeof (client as { defineCommand?: unknown } | null)?.defineCommand === 'function';
}

/**
 * ioredis, the default. Scripts are registered with `defineCommand`, which sends EVALSHA and
 * falls back to EVAL on NOSCRIPT. The two scripts of every lock, acquire and release, go out as
 * plain EVALSHA calls instead (see `bareScript`).
 */
export class IoRedisDriver implements RedisDriver {
  readonly keyPrefix: string;
  readonly isCluster: boolean;

  constructor(readonly client: IoRedisClient) {
    // ioredis adds its `keyPrefix` to every key of a command (it reads the key count of EVALSHA).
    const options = (client as { options?: { keyPrefix?: string; redisOptions?: { keyPrefix?: string } } }).options;
    this.keyPrefix = options?.keyPrefix ?? options?.redisOptions?.keyPrefix ?? '';
    this.isCluster = (client as { isCluster?: boolean }).isCluster === true;
  }

  scripts(): Record<ScriptName, ScriptCall> {
    const commands = this.client as unknown as Record<string, ScriptCall>;
    const calls = {} as Record<ScriptName, ScriptCall>;
    for (const [script, { name, numberOfKeys, lua }] of Object.entries(COMMANDS) as [ScriptName, (typeof COMMANDS)[ScriptName]][]) {
      this.client.defineCommand(name, numberOfKeys === null ? { lua } : { numberOfKeys, lua });
      calls[script] = commands[name]!.bind(this.client);
    }
    return calls;
  }

  /**
   * A script sent as a plain EVALSHA, and EVAL when the server has not cached it yet (it is
   * cached from then on). ioredis' `defineCommand` wrapper does the same, but copies the
   * arguments twice and adds a promise and a closure per call: about 0.3 us of CPU per call.
   * ioredis still routes the command by its first key on a Cluster and adds the `keyPrefix`.
   */
  bareScript(name: ScriptName): BareScriptCall {
    const { numberOfKeys, lua } = COMMANDS[name];
    if (numberOfKeys === null) throw new Error(`bareScript(${name}): the script takes its key count first`);
    const sha = createHash('sha1').update(lua).digest('hex');
    const evalsha = this.client.evalsha.bind(this.client) as unknown as Eval;
    const evalScript = this.client.eval.bind(this.client) as unknown as Eval;
    return {
      send: (...args) => evalsha(sha, numberOfKeys, ...args),
      resend: (...args) => evalScript(lua, numberOfKeys, ...args),
    };
  }

  async evalScript(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    // ioredis adds its keyPrefix to the declared keys (it reads the key count).
    try {
      return await (this.client.evalsha as unknown as Eval)(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return (this.client.eval as unknown as Eval)(script.lua, keys.length, ...keys, ...args);
    }
  }

  async setIfAbsent(key: string, value: string, ttl: number): Promise<boolean> {
    return (await this.client.set(key, value, 'PX', ttl, 'NX')) === 'OK';
  }

  async exists(key: string): Promise<boolean> {
    return (await this.client.exists(key)) === 1;
  }

  async readLock(lock: string, fence: string, waiters: string): Promise<[string | null, number, string | null, number]> {
    const replies = await this.client.pipeline().get(lock).pttl(lock).get(fence).zcard(waiters).exec();
    return (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string | null, number, string | null, number];
  }

  ping(): Promise<unknown> {
    return this.client.ping();
  }

  async masters(): Promise<RedisNode[]> {
    if (!this.isCluster) return [ioredisNode(this.client as Redis)];
    const cluster = this.client as Cluster;
    // Not connected yet: any command waits for the slot map (or fails like any command).
    if (cluster.nodes('master').length === 0) await cluster.ping();
    return cluster.nodes('master').map(ioredisNode);
  }

  slotOwner(slot: number): string | undefined {
    return (this.client as Cluster).slots?.[slot]?.[0];
  }

  /**
   * A `duplicate()` of the client without its `keyPrefix`: channel names are already spelled as
   * Redis sees them (the scripts publish on a declared key, which ioredis prefixed), and ioredis
   * would prefix a SSUBSCRIBE channel a second time.
   */
  subscriber(onMessage: (channel: string, message: string) => void): ReleaseSubscriber {
    // ioredis routes SSUBSCRIBE to the node that owns the channel's slot only with
    // `shardedSubscribers`; a plain SUBSCRIBE still goes to its one subscriber node.
    const connection = this.isCluster
      ? (this.client as Cluster).duplicate(undefined, { keyPrefix: '', redisOptions: { ...(this.client as Cluster).options.redisOptions, keyPrefix: '' }, shardedSubscribers: true })
      : (this.client as Redis).duplicate({ keyPrefix: '' });
    connection.on('message', onMessage);
    connection.on('smessage', onMessage);
    connection.on('error', () => undefined); // the command connection reports connection trouble
    return {
      subscribe: async (channel, sharded) => {
        await (sharded ? (connection as Cluster).ssubscribe(channel) : connection.subscribe(channel));
      },
      unsubscribe: async (channel, sharded) => {
        await (sharded ? (connection as Cluster).sunsubscribe(channel) : connection.unsubscribe(channel));
      },
      close: () => connection.disconnect(),
    };
  }
}

function ioredisNode(node: Redis): RedisNode {
  return {
    info: (section) => node.info(section),
    scan: (cursor, pattern, count) => node.scan(cursor, 'MATCH', pattern, 'COUNT', count),
  };
}
