import type { ScriptName } from '../lock-lua.js';

/** A script's text and its SHA1, by which servers cache it. */
export interface LuaScript {
  lua: string;
  sha: string;
}

/** Runs a script on a store's client (EVALSHA, EVAL on NOSCRIPT), through its driver. */
export type RunScript = (script: LuaScript, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/** A script call: the declared keys, then the arguments (a `null` key count: the count first). */
export type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/**
 * A script call whose NOSCRIPT fallback the caller chains itself: `send` is the EVALSHA alone,
 * `resend` the EVAL of the same script with the same arguments, for when `send` failed with
 * NOSCRIPT (`isNoScript`). The scripts every lock runs go this way, so that one `then` of the
 * caller takes both the reply and the fallback: a promise less per call.
 */
export interface BareScriptCall {
  send(...args: (string | number)[]): Promise<unknown>;
  resend(...args: (string | number)[]): Promise<unknown>;
}

/** The error a server gives for EVALSHA of a script it has not cached (yet, or any more). */
export function isNoScript(error: unknown): boolean {
  // GLIDE reports it as "... NoScriptError: No matching script. Please use EVAL."
  return /NOSCRIPT|NoScriptError/.test(String((error as { message?: unknown } | null | undefined)?.message));
}

/** How Redis (6, 7) and Valkey go on after the name of a command they do not know, echoing its first arguments. */
const ECHOED_ARGUMENTS = ', with args beginning with:';

/**
 * A script call's error as the library passes it on. A server that does not know the command
 * (EVALSHA or EVAL renamed or disabled with `rename-command`, or a proxy in front of it that does
 * not pass scripts on) echoes the call's first arguments in its reply: a lock's key and owner
 * token (a semaphore permit's key holds the token too), a fenced write's value. In an error, and
 * so in a log line, the token lets whoever reads it release or extend the lock: the echo is left
 * out, and the message says what the library needs instead. Any other error passes as it is.
 */
export function scriptError(error: unknown): unknown {
  withoutArguments(error);
  const message = (error as { message?: unknown } | null | undefined)?.message;
  if (typeof message !== 'string') return error;
  const echo = message.indexOf(ECHOED_ARGUMENTS);
  if (echo < 0 || !/unknown command/i.test(message.slice(0, echo))) return error;
  const refused = new Error(
    `${message.slice(0, echo)} (the arguments it echoed are left out: they hold a lock's owner token). ` +
      'The locks are Lua scripts sent with EVALSHA and EVAL: this server has the command renamed or disabled (rename-command), or a proxy in front of it does not pass it on.',
  );
  refused.name = (error as Error).name;
  return refused;
}

/**
 * A command a client handed in refused unsent because its connection to the server that serves the
 * command dropped and the client's own reconnect strategy (`strategy`, the option's name) gave that
 * connection up for good, while the client itself stays open: a node-redis Cluster keeps the closed
 * node connection for the master and fails every command of its slots with `ClientClosedError`
 * (its `cause`) until its owner closes it. Asking again changes nothing (see `lastingRefusal`).
 */
export class ReconnectGivenUpError extends Error {
  constructor(
    readonly strategy: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'ReconnectGivenUpError';
  }
}

/** `scriptError` thrown, as a promise's rejection handler. */
export function throwScriptError(error: unknown): never {
  throw scriptError(error);
}

/**
 * Leaves out the arguments ioredis and iovalkey put on every reply error and every command a
 * closed connection aborted (`command: { name, args }`), keeping the command's name and how many
 * arguments it had. The library keeps a client's error as its own error's `cause`, which
 * `console.error`, `util.inspect` and logging libraries' error serializers print with its own
 * properties: a lock script's arguments hold the lock's owner token (whoever reads it can release
 * or extend the lock), and a refused login's, which ioredis hands to every command queued
 * meanwhile (and to a Cluster's `lastNodeError`), the user name and password. The error is changed
 * in place: the application's own handlers of that error (its `error` event) see it so too.
 * node-redis' and GLIDE's errors carry their message alone.
 */
export function withoutArguments(error: unknown): void {
  for (let at = error, depth = 0; typeof at === 'object' && at !== null && depth < 4; at = (at as { lastNodeError?: unknown }).lastNodeError, depth++) {
    const command = (at as { command?: { name?: unknown; args?: unknown } }).command;
    if (typeof command !== 'object' || command === null || !Array.isArray(command.args)) continue;
    (at as { command: unknown }).command = { name: command.name, args: [`(${command.args.length} arguments left out)`] };
  }
}

/** A read-only command on one key, as `RedisDriver.read` takes it. */
export type ReadCommand = readonly ['GET' | 'PTTL' | 'ZCARD' | 'HGETALL', string];

/** A HGETALL reply as the flat `[field, value, ...]` list, whatever form the client gave it in (list, object, Map). */
export function flatPairs(reply: unknown): string[] {
  if (Array.isArray(reply)) return reply.map(String);
  const entries = reply instanceof Map ? [...reply.entries()] : Object.entries((reply ?? {}) as Record<string, unknown>);
  return entries.flatMap(([field, value]) => [String(field), String(value)]);
}

/** One Redis node of a deployment, for the calls that must reach each master. */
export interface RedisNode {
  info(section: string): Promise<string>;
  /** `CLUSTER NODES` as this node answers it (its own line flagged `myself`); Cluster only. */
  clusterNodes(): Promise<string>;
  /** One SCAN step: the next cursor (`'0'` when done) and the keys found. */
  scan(cursor: string, pattern: string, count: number): Promise<[string, string[]]>;
}

/** A master to PING for a health check, named by its address (`host:port`) when the client knows it. */
export interface PingTarget {
  readonly address?: string;
  /** A PING that fails where a lock's script would be refused (see `writablePing`). */
  ping(): Promise<unknown>;
}

/**
 * A script that does nothing, declared (by its shebang, with no `no-writes` or `allow-oom` flag)
 * as one that may write: Redis 7 refuses it exactly where it refuses a lock's script, on a
 * replica (READONLY: a failover that demoted the server a connection still points at), over
 * `maxmemory` with `noeviction` (OOM), or with too few replicas for `min-replicas-to-write`, where
 * a PING still answers PONG.
 */
const WRITE_PROBE = '#!lua\nreturn 1';

/**
 * The health check's PING: the write probe above, and a plain PING on a server before Redis 7,
 * which does not know the shebang (its compile error is no refusal of writes).
 */
export async function writablePing(send: (args: string[]) => Promise<unknown>): Promise<unknown> {
  try {
    return await send(['EVAL', WRITE_PROBE, '0']);
  } catch (error) {
    if (!/compiling script|unexpected symbol/i.test(String((error as Error)?.message))) throw error;
    return send(['PING']);
  }
}

/** The connection that carries release messages to the waiters of this process. */
export interface ReleaseSubscriber {
  /** SUBSCRIBE (SSUBSCRIBE when sharded: Cluster only) to a channel spelled as Redis sees it. */
  subscribe(channel: string, sharded: boolean): Promise<void>;
  /** Undoes `subscribe(channel, sharded)`, with the same `sharded`. */
  unsubscribe(channel: string, sharded: boolean): Promise<void>;
  /** Closes the connection, which the driver opened. */
  close(): void;
}

/**
 * What the lock engine needs of a Redis client, whatever library it comes from: ioredis (the
 * default, and every connection the module opens itself) or node-redis (a client handed in).
 * Keys are passed as the lock engine names them; the driver adds the client's own key prefix
 * where its library would.
 */
export interface RedisDriver {
  /** The key prefix the client adds to the keys of its commands (not to channels). */
  readonly keyPrefix: string;
  /** Redis Cluster: a script's keys must share one slot, and some calls go per node. */
  readonly isCluster: boolean;
  /** One of the lock scripts (`lock-lua.ts`), its NOSCRIPT fallback left to the caller (see `BareScriptCall`). */
  bareScript(name: ScriptName): BareScriptCall;
  /**
   * Runs any other script (the semaphore's, the read side's) the same way: EVALSHA, EVAL on
   * NOSCRIPT. `keys` are named as the engine names them; the driver adds the client's prefix.
   * `whole`: EVAL at once, for a call that must run though nobody may be left to read a NOSCRIPT
   * answer and send it again (a give-back at shutdown, the connection closed behind it).
   * `mayResend`, asked once the server answered NOSCRIPT: `false` drops the EVAL, and the call
   * rejects with that answer (the store closed meanwhile, see `LockScripts.close`).
   */
  evalScript(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], whole?: boolean, mayResend?: () => boolean): Promise<unknown>;
  /** SET key value PX ttl NX: whether it was set. */
  setIfAbsent(key: string, value: string, ttl: number): Promise<boolean>;
  exists(key: string): Promise<boolean>;
  /** HDEL key field: how many fields it deleted (0 or 1). A plain write: on a replica it fails with READONLY. */
  deleteField(key: string, field: string): Promise<number>;
  /** GET lock, PTTL lock, GET fence, ZCARD waiters in one round trip (the keys share one slot). */
  readLock(lock: string, fence: string, waiters: string): Promise<[string | null, number, string | null, number]>;
  /**
   * Read-only commands on keys of one slot, in one round trip, for `inspect()`: each reply as
   * Redis gives it, except HGETALL's, which is the flat `[field, value, ...]` list.
   */
  read(commands: readonly ReadCommand[]): Promise<unknown[]>;
  /**
   * How often the connection was reset so far, for a client that sends unanswered commands again
   * after a reset (ioredis): a release seen refused across a reset may have run before. Absent
   * for clients that reject such commands instead.
   */
  connectionResets?(): number;
  ping(): Promise<unknown>;
  /** Whether the client was closed (by its owner, for a client handed in): it sends no command any more. */
  closed(): boolean;
  /**
   * Closed because the client's own reconnect strategy gave up after its connection dropped, not
   * by its owner: the option that did (node-redis' `socket.reconnectStrategy`). Absent where the
   * driver cannot tell (ioredis' clients are told apart by their status, see closed-clients.ts).
   * Also while the client is open (`closed()` false), for a node-redis Cluster that gave up a
   * master's connection so (`defaults.socket.reconnectStrategy`): it sends nothing to that master.
   */
  reconnectGivenUp?(): string | undefined;
  /** The masters (the one server outside a Cluster), once the client knows them. */
  masters(): Promise<RedisNode[]>;
  /** Cluster: an id of the master serving `slot` by the client's current map, if known. */
  slotOwner(slot: number): string | undefined;
  /**
   * Cluster: asks the client to read its slot map again now (see `SlotRefresh`); settles once it
   * did or failed. Absent where the client has no public call for it (node-redis, GLIDE).
   */
  refreshSlots?(): Promise<void>;
  /**
   * A new connection for release messages; `onMessage(channel, message)` gets each one. On a
   * Cluster it takes both kinds of subscription: each server publishes sharded or not by its
   * version. `onGivenUp(cause, strategy)`: the connection dropped and the client's own reconnect
   * strategy gave it up (node-redis' `reconnectStrategy: false`, or one that returned `false`;
   * ioredis' `retryStrategy` that returned no number): no release message comes until the next
   * `subscribe` opens it again. `strategy` names the client's option (node-redis' when absent).
   */
  subscriber(onMessage: (channel: string, message: string) => void, onGivenUp?: (cause: unknown, strategy?: string) => void): ReleaseSubscriber;
  /**
   * Every master to PING for a health check: on a Cluster, each master of the client's slot
   * map, including one the client lost its connection to (its PING then fails), so that a
   * master that is down is reported, not skipped.
   */
  pingTargets(): Promise<PingTarget[]>;
}
