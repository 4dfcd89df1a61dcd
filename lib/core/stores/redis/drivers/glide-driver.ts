import { InvalidLockOptionsError } from '../../../../errors/invalid-lock-options.error.js';
import { createHash } from 'node:crypto';
import { setTimeout } from '../../../time/real-timers.js';
import { refusedReply } from '../../../engine/store-failure.js';
// The library's monotonic clock (node:perf_hooks), not the global `performance`, which a test's fake timers replace.
import { now as monotonicNow } from '../../../time/clock.js';
import { settleWithin, TIMED_OUT } from '../../../time/settle-within.js';
import { COMMANDS, type ScriptName } from '../lock-lua.js';
import { isGlideCluster, type ValkeyGlideClient } from './glide-client.js';
import { PRIMARY_COMMAND, PRIMARY_READ, readsFromReplicas } from './glide-primary-reads.js';
import { flatPairs, isNoScript, scriptError, throwScriptError, writablePing, type BareScriptCall, type LuaScript, type PingTarget, type ReadCommand, type RedisDriver, type RedisNode, type ReleaseSubscriber } from './redis-driver.js';

/** Loaded only by a driver of a GLIDE client: this library never imports it otherwise. */
const GLIDE_PACKAGE = '@valkey/valkey-glide';

/** What the driver uses of the GLIDE package. */
interface GlideModule {
  Decoder: { String: number };
}

/** A node of a GLIDE Cluster, as `routeByAddress` names it, or the master of a key's slot. */
type Route = { type: 'routeByAddress'; host: string; port: number } | { type: 'primarySlotKey'; key: string };

interface GlideCommands {
  customCommand(args: string[], options?: { route?: Route | 'allPrimaries'; decoder?: number }): Promise<unknown>;
  close(): void;
}

interface GlideSubscriber {
  subscribe(channels: Set<string>, timeoutMs: number): Promise<void>;
  unsubscribe(channels: Set<string>, timeoutMs: number): Promise<void>;
  ssubscribe(channels: Set<string>, timeoutMs: number): Promise<void>;
  sunsubscribe(channels: Set<string>, timeoutMs: number): Promise<void>;
  /** Gives channels up (null: all) without waiting for the server; `sunsubscribeLazy`: a Cluster client's only. */
  unsubscribeLazy?(channels: Set<string> | null): Promise<void>;
  sunsubscribeLazy?(channels: Set<string> | null): Promise<void>;
  /** `sharded`: a Cluster client's only (SPUBLISH). */
  publish(message: string, channel: string, sharded?: boolean): Promise<number>;
  close(): void;
}

/** The configuration a GLIDE client was created with (its `config`), as far as the driver reads it. */
interface GlideConfig {
  addresses: { host: string; port?: number }[];
  [option: string]: unknown;
}

/** A master of the Cluster, from CLUSTER NODES. */
interface Master {
  id: string;
  host: string;
  port: number;
  failed: boolean;
}

/** How long a (un)subscription waits for the server's confirmation. */
const SUBSCRIBE_TIMEOUT = 5_000;
/** How long a subscription goes unconfirmed before the driver asks why (see `channelRefusal`). */
const PROBE_AFTER_MS = 50;
/**
 * What the probe publishes: no release message (no `<token>:<fencing token>`, not the freed `*`),
 * so every notifier on the channel leaves it alone.
 */
const PROBE_MESSAGE = 'subscription-probe';
/** How old the Cluster's slot map may be before `slotOwner` has it read again (in the background). */
const SLOT_MAP_AGE = 10_000;
/** GLIDE's `ProtocolVersion.RESP3`: subscriptions need it. */
const RESP3 = 0;

let glide: GlideModule | undefined;
let loading: Promise<GlideModule> | undefined;

function loadGlide(): Promise<GlideModule> {
  loading ??= (import(GLIDE_PACKAGE) as Promise<GlideModule>).then(
    (module) => (glide = module),
    (error: unknown) => {
      loading = undefined;
      throw new Error(`A Valkey GLIDE client was handed in, but ${GLIDE_PACKAGE} cannot be loaded from this library: ${(error as Error).message}`);
    },
  );
  return loading;
}

/** How long a command waits for a place among the client's in-flight requests (see `GlideDriver.sendWithin`). */
const INFLIGHT_RETRY_MS = 2_000;
const INFLIGHT_BACKOFF_MAX_MS = 20;
/** How long a health check waits for a fresh slot map before it PINGs by the last one (see `pingTargets`). */
const TOPOLOGY_WAIT_MS = 200;
/** GLIDE's `DEFAULT_INFLIGHT_REQUESTS_LIMIT`, for a client that does not show its own. */
const DEFAULT_INFLIGHT_LIMIT = 1_000;

/** A command waiting for a place among the client's in-flight requests, in the order it was sent. */
interface Waiting {
  readonly seq: number;
  readonly args: string[];
  readonly options: object;
  /** When it began to wait (its first refusal, or its send behind others waiting). */
  readonly since: number;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** GLIDE's last refusal of it, which it fails with once it has waited INFLIGHT_RETRY_MS. */
  readonly refusal?: unknown;
}

function isInflightRefusal(error: unknown): boolean {
  return error instanceof Error && /maximum inflight requests/i.test(error.message);
}

/**
 * Valkey GLIDE (`@valkey/valkey-glide` 2.x), for a client handed in: `GlideClient` (one server)
 * or `GlideClusterClient`. Scripts go out as `EVALSHA` through `customCommand`, and as `EVAL` to
 * a node that answers NOSCRIPT, both routed by GLIDE by their first key on a Cluster (GLIDE's own
 * `invokeScript` loads a script with a `SCRIPT LOAD` sent to every master, so one frozen master
 * held up every master's reload); every other command through `customCommand` too, routed by its
 * key, or to one node by address for the calls that must reach each master. GLIDE has no key prefix.
 * Release messages come on a GLIDE client of the driver's own, created with the handed-in
 * client's configuration and a message callback, subscribing as waiters come and go (GLIDE 2
 * keeps its subscriptions across reconnections).
 */
export class GlideDriver implements RedisDriver {
  readonly keyPrefix = '';
  readonly isCluster: boolean;
  /** A standalone client that sends reads to replicas: the driver's reads go in scripts (see glide-primary-reads.ts). */
  private readonly primaryReads: boolean;
  private readonly commands: GlideCommands;
  private readonly config: GlideConfig;
  /** GLIDE's `inflightRequestsLimit` on the client: never more of the driver's own commands in flight. */
  private readonly inflightLimit: number;
  /** The driver's commands GLIDE has and that have not settled. */
  private inflight = 0;
  /** Commands sent so far: their numbers keep the order of those that wait. */
  private sent = 0;
  /** Commands waiting for a place, in the order they were sent; undefined while none waits. */
  private waiting?: Waiting[];
  /** A refusal's backoff under way: nothing more goes to GLIDE until it ends. */
  private backingOff = false;
  /** How long the backoffs since the last command GLIDE took have lasted. */
  private backedOff = 0;
  /** The timer that fails commands waiting longer than INFLIGHT_RETRY_MS is armed. */
  private expiring = false;

  constructor(
    readonly client: ValkeyGlideClient,
    option = 'redis',
  ) {
    this.isCluster = isGlideCluster(client);
    this.commands = client as unknown as GlideCommands;
    // NOTE: GLIDE keeps the configuration a client was created with in its `config` field; the
    // subscriber connection is created with it. A client without one is refused here, at startup,
    // rather than leaving waiters without release messages later.
    const config = (client as unknown as { config?: GlideConfig }).config;
    if (config === null || typeof config !== 'object' || !Array.isArray(config.addresses) || config.addresses.length === 0) {
      throw new InvalidLockOptionsError(
        option,
        client,
        'a Valkey GLIDE client that shows the configuration it was created with (its `config`), which the lock module needs to open the connection for release messages: one created by GlideClient.createClient() or GlideClusterClient.createClient() of @valkey/valkey-glide 2.x',
      );
    }
    this.config = config;
    this.primaryReads = !this.isCluster && readsFromReplicas(config);
    const limit = (client as unknown as { inflightRequestsLimit?: unknown }).inflightRequestsLimit ?? config.inflightRequestsLimit;
    this.inflightLimit = typeof limit === 'number' && Number.isFinite(limit) && limit >= 1 ? Math.floor(limit) : DEFAULT_INFLIGHT_LIMIT;
    void loadGlide().catch(() => undefined); // the first script call reports a failure
  }

  /**
   * `EVALSHA`, and `EVAL` (`resend`) for a node that answered NOSCRIPT (it caches the script from
   * then on). A script's first call in the process goes as `EVAL` and starts loading it on every
   * master in the background (`SCRIPT LOAD`, nobody waits for it), and on a Cluster its calls go as
   * `EVAL` until that load is answered: GLIDE's core logs each NOSCRIPT answer as a warning, which
   * should then come only after a restart or a failover.
   */
  bareScript(name: ScriptName): BareScriptCall {
    const { numberOfKeys, lua } = COMMANDS[name];
    const script = { lua, sha: createHash('sha1').update(lua).digest('hex') };
    // The key count first, as EVALSHA takes it (a script without a fixed count is given it first).
    const call = (command: 'EVALSHA' | 'EVAL', params: (string | number)[]): Promise<unknown> => {
      const body = command === 'EVAL' ? lua : this.loaded(script) ? script.sha : lua;
      const sent = command === 'EVAL' || body === lua ? 'EVAL' : 'EVALSHA';
      return this.send(numberOfKeys === null ? [sent, body, ...params.map(String)] : [sent, body, String(numberOfKeys), ...params.map(String)]);
    };
    return { send: (...params) => call('EVALSHA', params), resend: (...params) => call('EVAL', params) };
  }

  evalScript(script: LuaScript, keys: readonly string[], args: readonly (string | number)[], whole = false, mayResend?: () => boolean): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    // The EVAL's refusal as the EVALSHA's: a server that does not know EVAL echoes its arguments.
    if (!this.loaded(script) || whole) return this.send(['EVAL', script.lua, ...tail]).catch(throwScriptError);
    return this.send(['EVALSHA', script.sha, ...tail]).catch((error: unknown) => {
      if (!isNoScript(error) || mayResend?.() === false) throw scriptError(error);
      return this.send(['EVAL', script.lua, ...tail]).catch(throwScriptError);
    });
  }

  /** Scripts whose background load was started, each with whether it has settled (see `bareScript`). */
  private readonly loading = new Map<string, boolean>();

  /**
   * Whether `script` is loaded on the masters as far as the driver knows; if it was never called,
   * starts loading it on every master. On a Cluster the calls go as EVAL until that load is
   * answered: sent as EVALSHA meanwhile (a burst of locks at the start), the masters the load had
   * not reached yet answered NOSCRIPT, each a round trip more and a warning line of GLIDE's core.
   * One server gets the load on its one connection ahead of the calls after it, which find it
   * loaded: EVALSHA there at once, or a burst of first calls would each carry the whole script.
   */
  private loaded(script: LuaScript): boolean {
    const settled = this.loading.get(script.sha);
    if (settled !== undefined) return settled;
    this.loading.set(script.sha, !this.isCluster);
    const done = (): void => void this.loading.set(script.sha, true);
    // A master that is down or frozen fails it (after GLIDE's request timeout): the others have it,
    // and EVAL serves that one once it answers NOSCRIPT.
    this.send(['SCRIPT', 'LOAD', script.lua], this.isCluster ? 'allPrimaries' : undefined).then(done, done);
    return false;
  }

  /** A command routed by GLIDE (by its key on a Cluster), or to the node(s) `route` names; replies as strings. */
  private send(args: string[], route?: Route | 'allPrimaries'): Promise<unknown> {
    const module = glide;
    if (module === undefined) return loadGlide().then(() => this.send(args, route));
    const options: { route?: Route | 'allPrimaries'; decoder: number } = { decoder: module.Decoder.String };
    if (route !== undefined) options.route = route;
    return this.sendWithin(args, options);
  }

  /**
   * GLIDE refuses a request while `inflightRequestsLimit` (1,000 by default) others are in flight
   * on the client, before sending it: not a Redis failure, and a burst of lock calls (or the
   * application's own commands on the same client) meets it. The driver's commands reach Redis in
   * the order they were sent (in quorum mode a master's give-back must not run after the same
   * token's next attempt there): while the driver's own commands fill the limit, or one GLIDE
   * refused waits out its backoff, the commands sent after it wait behind it, for up to
   * `INFLIGHT_RETRY_MS`, and go out in order as places free. Below the limit a command goes
   * straight to GLIDE. The backoff is on the real timers (real-timers.ts), or a test's fake timers
   * would leave such a call unanswered.
   */
  private sendWithin(args: string[], options: object): Promise<unknown> {
    const seq = this.sent++;
    if (this.waiting === undefined && this.inflight < this.inflightLimit) return this.hand(seq, args, options, undefined);
    return new Promise<unknown>((resolve, reject) => this.wait({ seq, args, options, since: monotonicNow(), resolve, reject }));
  }

  /** Gives GLIDE a command; one it refuses for its in-flight limit waits in its order. */
  private hand(seq: number, args: string[], options: object, since: number | undefined): Promise<unknown> {
    this.inflight++;
    let reply: Promise<unknown>;
    try {
      reply = this.commands.customCommand(args, options);
    } catch (error) {
      // Thrown rather than rejected (a closed client, say): its caller hears it, not drain()'s.
      reply = Promise.reject(error);
    }
    return reply.then(this.settled, (error: unknown) => {
      this.inflight--;
      if (!isInflightRefusal(error)) {
        this.backedOff = 0;
        if (this.waiting !== undefined) this.drain();
        throw error;
      }
      // The application's own commands on the client hold GLIDE's places: this one waits ahead
      // of every command sent after it that has not gone yet, and nothing goes for a backoff.
      const waited = since ?? monotonicNow();
      if (monotonicNow() - waited >= INFLIGHT_RETRY_MS) {
        if (this.waiting !== undefined) this.drain();
        throw error;
      }
      return new Promise<unknown>((resolve, reject) => {
        this.wait({ seq, args, options, since: waited, resolve, reject, refusal: error });
        this.backOff();
      });
    });
  }

  /** A command GLIDE took has settled: a place is free (one function for every command). */
  private readonly settled = (reply: unknown): unknown => {
    this.inflight--;
    this.backedOff = 0;
    if (this.waiting !== undefined) this.drain();
    return reply;
  };

  private wait(entry: Waiting): void {
    const waiting = (this.waiting ??= []);
    let at = waiting.length;
    while (at > 0 && waiting[at - 1]!.seq > entry.seq) at--;
    waiting.splice(at, 0, entry);
    if (!this.expiring) this.expireLater();
  }

  /** Hands GLIDE the commands waiting, in order, while the driver has places (and no backoff runs). */
  private drain(): void {
    const waiting = this.waiting;
    if (waiting === undefined || this.backingOff) return;
    let taken = 0;
    while (taken < waiting.length && this.inflight < this.inflightLimit) {
      const entry = waiting[taken++]!;
      this.hand(entry.seq, entry.args, entry.options, entry.since).then(entry.resolve, entry.reject);
    }
    waiting.splice(0, taken);
    if (waiting.length === 0) this.waiting = undefined;
  }

  private backOff(): void {
    if (this.backingOff) return;
    this.backingOff = true;
    const delay = Math.min(INFLIGHT_BACKOFF_MAX_MS, 1 + this.backedOff / 4);
    this.backedOff += delay;
    setTimeout(() => {
      this.backingOff = false;
      this.drain();
    }, delay).unref();
  }

  /** Fails, once they have waited `INFLIGHT_RETRY_MS`, the commands still waiting for a place (never sent). */
  private expireLater(): void {
    this.expiring = true;
    setTimeout(() => {
      this.expiring = false;
      const waiting = this.waiting;
      if (waiting === undefined) return;
      const now = monotonicNow();
      const expired = waiting.filter((entry) => now - entry.since >= INFLIGHT_RETRY_MS);
      if (expired.length > 0) {
        this.waiting = waiting.filter((entry) => now - entry.since < INFLIGHT_RETRY_MS);
        if (this.waiting.length === 0) this.waiting = undefined;
        for (const entry of expired) entry.reject(entry.refusal ?? new Error(`The GLIDE client had its inflightRequestsLimit (${this.inflightLimit}) of commands in flight for ${INFLIGHT_RETRY_MS} ms: the command was not sent.`));
      }
      if (this.waiting !== undefined) this.expireLater();
    }, INFLIGHT_RETRY_MS / 4).unref();
  }

  async setIfAbsent(key: string, value: string, ttl: number): Promise<boolean> {
    return (await this.send(['SET', key, value, 'PX', String(ttl), 'NX'])) === 'OK';
  }

  async exists(key: string): Promise<boolean> {
    return Number(await this.readOnMaster(['EXISTS', key])) === 1;
  }

  async deleteField(key: string, field: string): Promise<number> {
    return Number(await this.send(['HDEL', key, field]));
  }

  /** Commands sent in one tick leave together: GLIDE multiplexes them on one connection. */
  async readLock(lock: string, fence: string, waiters: string): Promise<[string | null, number, string | null, number]> {
    const [owner, pttl, fencing, queued] = await Promise.all([this.readOnMaster(['GET', lock]), this.readOnMaster(['PTTL', lock]), this.readOnMaster(['GET', fence]), this.readOnMaster(['ZCARD', waiters])]);
    return [owner === null ? null : String(owner), Number(pttl), fencing === null ? null : String(fencing), Number(queued)];
  }

  read(commands: readonly ReadCommand[]): Promise<unknown[]> {
    return Promise.all(
      commands.map(async ([verb, key]) => {
        const reply = await this.readOnMaster([verb, key]);
        return verb === 'HGETALL' ? glidePairs(reply) : reply;
      }),
    );
  }

  /**
   * A read of one key, from its slot's master on a Cluster: a client whose `readFrom` sends
   * reads to replicas (the application's choice for its own) would route it to one, which may
   * not have applied the last writes yet: `inspect()` answered a lock this process had just
   * taken as free. Scripts go to the master already; a standalone client, which takes no
   * route, runs the read in one (see glide-primary-reads.ts).
   */
  private readOnMaster([verb, key]: [string, string]): Promise<unknown> {
    if (this.isCluster) return this.send([verb, key], { type: 'primarySlotKey', key });
    return this.primaryReads ? this.evalScript(PRIMARY_READ, [key], [verb]) : this.send([verb, key]);
  }

  ping(): Promise<unknown> {
    return this.send(['PING']);
  }

  /** A closed GLIDE client is never opened again. */
  closed(): boolean {
    return (this.client as { isClosed?: unknown }).isClosed === true;
  }

  async masters(): Promise<RedisNode[]> {
    if (!this.isCluster) return [nodeOf((args) => (this.primaryReads ? this.evalScript(PRIMARY_COMMAND, [], args) : this.send(args)))];
    const { masters } = await this.topology();
    // Those that serve slots: GLIDE connects to the nodes CLUSTER SLOTS names, so a master that
    // serves none (added and not resharded yet, or emptied before its removal) cannot be reached
    // by address, and a call sent there timed out (every page of the lock board's listing).
    const serving = new Set(this.slots);
    return masters.filter((master) => !master.failed && serving.has(master.id)).map((master) => nodeOf((args) => this.send(args, routeTo(master))));
  }

  /** The Cluster's slot map, by master id, as CLUSTER NODES last gave it. */
  private slots?: (string | undefined)[];
  private slotsReadAt = 0;
  private reading?: Promise<{ masters: Master[] }>;

  slotOwner(slot: number): string | undefined {
    // GLIDE routes each call by its own map; this one only groups renewals per master, and a
    // stale group costs a retry per lock that moved (see `renewElsewhere`), not a wrong answer.
    if (Date.now() - this.slotsReadAt > SLOT_MAP_AGE) this.topology().catch(() => undefined);
    return this.slots?.[slot];
  }

  /** The masters as CLUSTER NODES last gave them. */
  private known?: Master[];

  /**
   * The masters and the slot map, from CLUSTER NODES (one read at a time), sent to any node: when
   * that node does not answer, the last map read, so that the other masters are still reached
   * (and a master that is down is still reported by the health check).
   */
  private topology(): Promise<{ masters: Master[] }> {
    // CLUSTER SLOTS names each master by the endpoint clients connect to (a hostname, with
    // `cluster-preferred-endpoint-type hostname`), which GLIDE routes by; CLUSTER NODES gives the
    // flags, and its address is the IP whatever the cluster prefers.
    if (this.reading !== undefined) return this.reading;
    const endpoints = this.send(['CLUSTER', 'SLOTS']).then(slotEndpoints, () => new Map<string, { host: string; port: number }>());
    this.reading = Promise.all([this.send(['CLUSTER', 'NODES']), endpoints])
      .then(
        ([reply, byId]) => {
          const { masters, slots } = parseClusterNodes(String(reply), byId);
          this.slots = slots;
          this.slotsReadAt = Date.now();
          this.known = masters;
          return { masters };
        },
        (error: unknown) => {
          if (this.known === undefined) throw error;
          return { masters: this.known };
        },
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  subscriber(onMessage: (channel: string, message: string) => void): ReleaseSubscriber {
    const factory = (this.client as unknown as { constructor: { createClient(config: object): Promise<GlideSubscriber> } }).constructor;
    const config = {
      ...this.config,
      protocol: RESP3,
      // Connected as its subscriptions need: an eager Cluster client fails to be made at all
      // while one master is frozen, and no channel of any master would be subscribed meanwhile.
      lazyConnect: true,
      pubsubSubscriptions: {
        channelsAndPatterns: {},
        callback: (message: { channel: unknown; message: unknown }) => onMessage(String(message.channel), String(message.message)),
      },
    };
    let connection: Promise<GlideSubscriber> | undefined;
    let closed = false;
    /** The last subscription failed for want of the channel's rights (see `channelRefusal`). */
    let refused = false;
    const open = (): Promise<GlideSubscriber> =>
      (connection ??= factory.createClient(config).then(
        (client) => {
          if (closed) client.close();
          return client;
        },
        (error: unknown) => {
          // Tried again by the notifier's next retry, not kept failed.
          connection = undefined;
          throw error;
        },
      ));
    return {
      subscribe: async (channel, sharded) => {
        if (closed) throw new Error('the release subscriber is closed');
        const client = await open();
        // Once a channel was refused, a retry asks first: GLIDE would send the refused SUBSCRIBE
        // again and again meanwhile (see `channelRefusal`).
        if (refused) await probe(client, channel, sharded);
        refused = false;
        const subscribing = sharded ? client.ssubscribe(new Set([channel]), SUBSCRIBE_TIMEOUT) : client.subscribe(new Set([channel]), SUBSCRIBE_TIMEOUT);
        await Promise.race([subscribing, channelRefusal(client, channel, sharded, subscribing)]).catch((error: unknown) => {
          if (isChannelRefusal(error)) refused = true;
          throw error;
        });
      },
      unsubscribe: async (channel, sharded) => {
        if (closed || connection === undefined) return;
        const client = await connection;
        await (sharded ? client.sunsubscribe(new Set([channel]), SUBSCRIBE_TIMEOUT) : client.unsubscribe(new Set([channel]), SUBSCRIBE_TIMEOUT));
      },
      close: () => {
        closed = true;
        // NOTE: GLIDE's core reconciles the channels a client wants with the server's in the
        // background; closed while it still wanted some (a waiter's, a lingering one), it logged
        // at ERROR level a few seconds later that it could not subscribe them, the client being
        // dropped: an error line at every shutdown. Given up first (null: all of them), nothing
        // is left to reconcile.
        connection?.then(
          (client) => {
            const close = (): void => client.close();
            Promise.all([client.unsubscribeLazy?.(null), client.sunsubscribeLazy?.(null)]).then(close, close);
          },
          () => undefined,
        );
      },
    };
  }

  async pingTargets(): Promise<PingTarget[]> {
    if (!this.isCluster) {
      // Given several addresses (a primary and its replicas, in any order), GLIDE sends to the
      // primary it found, which the first address need not be: naming it would send an operator
      // to the wrong server.
      const { host, port } = this.config.addresses[0]!;
      const address = this.config.addresses.length === 1 ? `${host}:${port ?? 6379}` : undefined;
      return [{ address, ping: () => writablePing((args) => this.send(args)) }];
    }
    // Every master that serves slots by the Cluster's map, one that is down included (its PING fails).
    // The map is read from any node, which may be the frozen one: GLIDE gives up on it only after
    // its requestTimeout, which may outlast the check. With a map known, the check waits a
    // moment for a fresh one and then PINGs by the last (the read goes on for the next check).
    const reading = this.topology();
    const known = this.known;
    let masters: Master[];
    if (known === undefined) ({ masters } = await reading);
    else {
      const read = await settleWithin(reading, TOPOLOGY_WAIT_MS);
      masters = read === TIMED_OUT ? known : read.masters;
    }
    return masters
      .filter((master) => this.slots?.includes(master.id))
      .map((master) => ({ address: `${master.host}:${master.port}`, ping: () => writablePing((args) => this.send(args, routeTo(master))) }));
  }
}

function routeTo(master: Master): Route {
  return { type: 'routeByAddress', host: master.host, port: master.port };
}

/** A HGETALL reply: GLIDE gives a list of `{ key, value }` records. */
function glidePairs(reply: unknown): string[] {
  if (Array.isArray(reply) && reply.every((entry) => entry !== null && typeof entry === 'object' && 'key' in entry && 'value' in entry)) {
    return (reply as { key: unknown; value: unknown }[]).flatMap(({ key, value }) => [String(key), String(value)]);
  }
  return flatPairs(reply);
}

/**
 * The masters and the slot map from a CLUSTER NODES reply: one line per node,
 * `<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot ranges...>`.
 */
export function parseClusterNodes(text: string, endpoints: ReadonlyMap<string, { host: string; port: number }> = new Map()): { masters: Master[]; slots: (string | undefined)[] } {
  const masters: Master[] = [];
  const slots: (string | undefined)[] = new Array(16384);
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    if (fields.length < 8) continue;
    const flags = fields[2]!.split(',');
    if (!flags.includes('master') || flags.includes('noaddr')) continue;
    const address = fields[1]!.split('@')[0]!;
    const colon = address.lastIndexOf(':');
    const host = address.slice(0, colon);
    const port = Number(address.slice(colon + 1));
    if (host === '' || !Number.isInteger(port) || port <= 0) continue;
    const id = fields[0]!;
    masters.push({ id, ...(endpoints.get(id) ?? { host, port }), failed: flags.includes('fail') });
    for (const range of fields.slice(8)) {
      if (range.startsWith('[')) continue; // a slot being imported or migrated: still its owner's
      const [from, to = from] = range.split('-').map(Number) as [number, number?];
      for (let slot = from; slot <= to; slot++) slots[slot] = id;
    }
  }
  // In one order whichever node answered: the lock board's cursor names a master by its index.
  masters.sort((a, b) => a.host.localeCompare(b.host) || a.port - b.port);
  return { masters, slots };
}

/**
 * Each master's endpoint by node id, from a CLUSTER SLOTS reply: `[from, to, [host, port, id,
 * ...], replicas...]` per range. A host of `?` or empty (an endpoint the node does not know)
 * is left out, and CLUSTER NODES' address serves.
 */
export function slotEndpoints(reply: unknown): Map<string, { host: string; port: number }> {
  const endpoints = new Map<string, { host: string; port: number }>();
  if (!Array.isArray(reply)) return endpoints;
  for (const range of reply) {
    const master = Array.isArray(range) ? range[2] : undefined;
    if (!Array.isArray(master) || master.length < 3) continue;
    const [host, port, id] = [String(master[0]), Number(master[1]), String(master[2])];
    if (host !== '' && host !== '?' && Number.isInteger(port) && port > 0) endpoints.set(id, { host, port });
  }
  return endpoints;
}

function nodeOf(send: (args: string[]) => Promise<unknown>): RedisNode {
  return {
    info: async (section) => String(await send(['INFO', section])),
    clusterNodes: async () => String(await send(['CLUSTER', 'NODES'])),
    scan: async (cursor, pattern, count) => {
      const [next, keys] = (await send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', String(count)])) as [unknown, unknown[]];
      return [String(next), keys.map(String)];
    },
  };
}

/**
 * Rejects with Redis' refusal of `channel` to the subscriber's user (NOPERM, an ACL without the
 * channel), once `subscribing` went unconfirmed for `PROBE_AFTER_MS`; never settles otherwise.
 * GLIDE's subscribe() does not say why a subscription is not confirmed: its core sends the refused
 * SUBSCRIBE again and again in the background (an ERROR line of its log each time), and the call
 * ends "timed out" after its timeout, so the notifier's warning could not say that the ACL refused
 * it, as ioredis' and node-redis' NOPERM does. A PUBLISH on the channel (SPUBLISH when sharded),
 * which Redis checks against the same channel rights and whose message no notifier acts on, is
 * refused alike: that refusal is the subscription's, and the channel is given up, so that GLIDE
 * stops asking for it (the notifier subscribes again on its next retry).
 */
function channelRefusal(client: GlideSubscriber, channel: string, sharded: boolean, subscribing: Promise<void>): Promise<never> {
  let settled = false;
  subscribing.then(
    () => (settled = true),
    () => (settled = true),
  );
  return new Promise<never>((_resolve, reject) => {
    setTimeout(() => {
      if (settled) return;
      probe(client, channel, sharded).then(
        () => undefined,
        (error: unknown) => {
          if (settled) return;
          const channels = new Set([channel]);
          (sharded ? client.sunsubscribeLazy?.(channels) : client.unsubscribeLazy?.(channels))?.catch(() => undefined);
          reject(error as Error);
        },
      );
    }, PROBE_AFTER_MS);
  });
}

/**
 * Resolves unless Redis refuses `channel` to the subscriber's user, and rejects with that refusal:
 * a PUBLISH (SPUBLISH when sharded) of a message no notifier acts on, which Redis checks against
 * the channel rights as it does a SUBSCRIBE. Any other failure (no +publish: a refusal of the
 * command, not of the channel) says nothing of the channel, and resolves.
 */
async function probe(client: GlideSubscriber, channel: string, sharded: boolean): Promise<void> {
  await (sharded ? client.publish(PROBE_MESSAGE, channel, true) : client.publish(PROBE_MESSAGE, channel)).catch((error: unknown) => {
    if (isChannelRefusal(error)) throw error;
  });
}

/** Redis' refusal of a channel to the user (NOPERM "... access one of the channels ..."). */
function isChannelRefusal(error: unknown): boolean {
  return refusedReply(error, false) === 'no-permission' && /\bchannel/i.test((error as Error).message);
}
