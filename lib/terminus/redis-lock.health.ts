import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { Subscription } from 'rxjs';
import { driverFor } from '../core/stores/redis/drivers/driver-for.js';
import type { RedisClient } from '../core/stores/redis/drivers/redis-client.js';
import type { PingTarget } from '../core/stores/redis/drivers/redis-driver.js';
import type { LockManager } from '../core/engine/lock-manager.js';
import { MULTI_KEY_LOCK_CHANNEL, type MultiKeyLockOutcome } from '../core/engine/lock-diagnostics.js';
import { settleWithin, TIMED_OUT } from '../core/time/settle-within.js';
import { InvalidLockOptionsError } from '../errors/invalid-lock-options.error.js';
import { parseDuration, type Duration } from '../core/time/duration.js';
import { LockService } from '../lock.service.js';
import { LOCK_RUNNER, NOT_A_LOCK_SERVICE } from '../redis-lock.constants.js';
import { RedisLockError } from '../errors/redis-lock.error.js';
import { LockHealthStats, LOST_WINDOW_MS } from './lock-health-stats.js';

/** Options of {@link RedisLockHealthIndicator.isHealthy}. */
export interface RedisLockHealthOptions {
  /**
   * How long the check may take: every node's PING (all at once) and, with `waitForReplicas`,
   * the master's `INFO replication` after it share this one budget. Milliseconds or a duration
   * such as `'2s'`, up to 60 s. Default 1000.
   */
  timeout?: Duration;
  /** Quorum mode: report `down` as soon as one node fails, not only when the quorum is lost. Default false. */
  requireAllNodes?: boolean;
  /**
   * Reports each node's `address` (`host:port`) and the text of each error, as the Redis client
   * gave it (cut to 200 characters). Default `false`: a health route is usually open to anyone
   * (probes, load balancers), and these name the servers and ports behind the application (an
   * error's text may name a host, or the ACL user on Redis 7.2 and later); a node is then told apart by its place in `nodes`, and an error says only
   * the Redis error code (`READONLY`, `OOM`, `NOPERM`) or the client's system error code
   * (`ECONNREFUSED`). Turn it on for a route only operators reach.
   */
  showDetails?: boolean;
}

/** One Redis node as the indicator saw it. */
export interface RedisLockNodeHealth {
  status: 'up' | 'down';
  /** `host:port` (or socket path) of the node, when the client knows it: with `showDetails` only. */
  address?: string;
  /** PING round trip, in milliseconds, when it answered. */
  latencyMs?: number;
  /**
   * Why it counts as down: a PING unanswered in time (or, on a Cluster client that had not
   * learned its masters yet, their discovery not done in time), the Redis error code of a refusal
   * (`Redis refused it: READONLY`) or the client's system error code; with `showDetails`, the
   * error's own text.
   */
  error?: string;
  /** In quorum mode, a node that is a Redis Cluster: each of its masters. */
  masters?: RedisLockNodeHealth[];
}

const DEFAULT_TIMEOUT_MS = 1_000;
const SHUTTING_DOWN = 'the application is shutting down: LockService takes no more locks';
/** After this long without a check, the indicator stops listening to lock events (at the next one). */
export const QUIET_PERIOD_MS = 10 * 60_000;

/**
 * A `@nestjs/terminus` (11 or 12) health indicator for the locks' Redis: `down` when Redis (on
 * a Cluster: any master of the client's slot map, each named by its address with `showDetails`; in quorum mode: a
 * majority of the nodes) does not answer a PING within the bound, or refuses writes (a PING that
 * is a script declared as writing: a replica's READONLY, an OOM). It also
 * reports the watchdog's renewal latency over the last minute and how many locks this process
 * lost in the last five minutes, which say more about the locks' health than a PING does.
 *
 * It listens to lock events only while someone asks: from the first check on (`statsSince`
 * says when that was), until ten minutes pass without a check. Before the first check, and
 * once checks stop, events are not even built for it.
 *
 * Add it to the providers of the module holding your health controller (which imports
 * `TerminusModule`, with `LockService` available there).
 *
 * @example
 * ```ts
 * import { RedisLockHealthIndicator } from 'nestjs-redis-lock/terminus';
 *
 * @Controller('health')
 * export class HealthController {
 *   constructor(private readonly health: HealthCheckService, private readonly locks: RedisLockHealthIndicator) {}
 *
 *   @Get() @HealthCheck()
 *   check() {
 *     return this.health.check([() => this.locks.isHealthy('locks')]);
 *   }
 * }
 * ```
 *
 * The result names no server: a health route is usually open to anyone. `showDetails: true`
 * adds each node's address and each error's text, for a route only operators reach.
 */
@Injectable()
export class RedisLockHealthIndicator implements OnModuleDestroy {
  private stats = new LockHealthStats();
  private subscription?: Subscription;
  private statsSince = 0;
  private askedAt = 0;

  constructor(
    private readonly health: HealthIndicatorService,
    private readonly locks: LockService,
  ) {}

  /**
   * Pings every Redis node the locks use (every master of a Cluster), all within `timeout`,
   * and reports `up` or `down` under `key` (default `redis-lock`), with each node's latency (its
   * address, and each error's text, with `showDetails`), the quorum's state in quorum mode, the renewal latency and the locks lost recently
   * (counted since `statsSince`, the first check). With `waitForReplicas`, also the replicas
   * online (`INFO replication`): fewer than it asks for is `down`, since every acquisition fails.
   * The whole check answers within `timeout`: a step that finds it spent reports `down`.
   * From `app.close()` on, `LockService` takes no more locks: the check is `down` then, with
   * only an `error`, and PINGs nothing.
   */
  async isHealthy<const Key extends string = 'redis-lock'>(key?: Key, options: RedisLockHealthOptions = {}): Promise<HealthIndicatorResult<Key>> {
    const where = 'RedisLockHealthIndicator.isHealthy';
    // Options given in the key's place would be taken for the key, and checked on the defaults.
    if (key !== undefined && typeof key !== 'string') throw new InvalidLockOptionsError('key', key, 'a string (the name of the result), or undefined').within(where);
    if (options === null || typeof options !== 'object') throw new InvalidLockOptionsError('options', options, 'an object').within(where);
    // A misspelt name (`requireAll`) would check in the lenient mode, or on the default timeout, without a word.
    for (const name of Object.keys(options)) {
      if (name !== 'timeout' && name !== 'requireAllNodes' && name !== 'showDetails') {
        throw new InvalidLockOptionsError(name, (options as Record<string, unknown>)[name], 'left out: it is no option of isHealthy() (its options are timeout, requireAllNodes, showDetails)').within(where);
      }
    }
    let timeout: number;
    try {
      timeout = parseDuration(options.timeout ?? DEFAULT_TIMEOUT_MS, 'timeout', 1, 60_000);
    } catch (error) {
      throw error instanceof InvalidLockOptionsError ? error.within(where) : error;
    }
    if (options.requireAllNodes !== undefined && typeof options.requireAllNodes !== 'boolean') {
      // 'false' read from the environment would turn strict mode on.
      throw new InvalidLockOptionsError('requireAllNodes', options.requireAllNodes, 'a boolean').within(where);
    }
    // 'false' read from the environment would show the addresses on an open route.
    if (options.showDetails !== undefined && typeof options.showDetails !== 'boolean') {
      throw new InvalidLockOptionsError('showDetails', options.showDetails, 'a boolean').within(where);
    }
    const details = options.showDetails === true;
    const session = this.health.check((key ?? 'redis-lock') as Key);
    // From app.close() on, every lock call is refused, while Redis still answers PING and Nest
    // closes the HTTP server only after the shutdown hooks: a readiness probe must stop sending
    // traffic that needs locks.
    if (this.manager.shuttingDown) return session.down({ error: SHUTTING_DOWN }) as HealthIndicatorResult<Key>;
    this.watch();
    const budget = new CheckBudget(timeout, this.manager.closing);
    const perClient = await Promise.all(this.manager.clients.map((client) => pingMasters(client, budget, details)));
    // One deployment (a server, a Sentinel master or a Cluster): each of its masters is a node,
    // and all must answer. In quorum mode each deployment is one node of the quorum.
    const nodes = perClient.length === 1 ? perClient[0]! : perClient.map(asQuorumNode);
    const answering = nodes.filter((node) => node.status === 'up').length;
    const data: Record<string, unknown> = {
      nodes,
      renewalLatency: this.stats.renewalLatency() ?? null,
      locksLostRecently: this.stats.lostRecently(),
      lostWindowMs: LOST_WINDOW_MS,
      statsSince: new Date(this.statsSince).toISOString(),
    };
    let healthy = answering === nodes.length;
    if (perClient.length > 1) {
      const needed = Math.floor(nodes.length / 2) + 1;
      const state = answering === nodes.length ? 'ok' : answering >= needed ? 'degraded' : 'lost';
      data.quorum = { state, answering, needed, nodes: nodes.length };
      healthy = options.requireAllNodes ? state === 'ok' : state !== 'lost';
    }
    // With waitForReplicas every acquisition fails while too few replicas are there to confirm
    // it: the locks are down then, however well the master answers.
    const wait = this.manager.replicaWait;
    if (wait !== undefined && healthy && perClient.length === 1) {
      const replicas = await replicasOnline(this.manager.clients[0]!, budget, Math.max(MAX_REPLICA_LAG_S, Math.ceil(wait.timeout / 1000)), details);
      data.replicas = { ...replicas, needed: wait.replicas };
      healthy = replicas.online !== undefined && replicas.online >= wait.replicas;
    }
    // A close begun while the check waited ended its waits: what the nodes did not answer by then says nothing of them.
    if (this.manager.shuttingDown) return session.down({ error: SHUTTING_DOWN }) as HealthIndicatorResult<Key>;
    return (healthy ? session.up(data) : session.down(data)) as HealthIndicatorResult<Key>;
  }

  onModuleDestroy(): void {
    this.unwatch();
  }

  /**
   * Listens to lock events from now on, if not already. The quiet period is checked when an
   * event arrives, so no timer is needed: a process with no lock events has nothing to stop.
   */
  private watch(): void {
    // The monotonic clock: a step of the wall clock must not end the watch or drop a loss.
    this.askedAt = performance.now();
    if (this.subscription !== undefined) return;
    this.stats = new LockHealthStats();
    this.statsSince = Date.now();
    this.subscription = this.locks.events$.subscribe((event) => {
      if (performance.now() - this.askedAt > QUIET_PERIOD_MS) this.unwatch();
      else this.stats.record(event);
    });
    // Which multi-key locks their callers got: a key's loss is the lock's then, not one while the
    // call still took its other keys. Process-wide, but told by the keys of this service's own events.
    subscribe(MULTI_KEY_LOCK_CHANNEL, this.recordWhole);
  }

  private readonly recordWhole = (message: unknown): void => this.stats.recordWhole(message as MultiKeyLockOutcome);

  private unwatch(): void {
    if (this.subscription !== undefined) unsubscribe(MULTI_KEY_LOCK_CHANNEL, this.recordWhole);
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private get manager(): LockManager {
    // A fake (useValue in a test) has no engine: said as @Locked says it, not as a TypeError.
    if (!(this.locks instanceof LockService)) throw new RedisLockError(`RedisLockHealthIndicator: the LockService it was given ${NOT_A_LOCK_SERVICE}`);
    return this.locks[LOCK_RUNNER] as LockManager;
  }
}

/**
 * One check's time: its steps run one after another (a Cluster's masters, then their PINGs; the
 * PING, then `INFO replication`), and each gets what the ones before it left, so that the check
 * answers within the `timeout` an orchestrator's probe is set to.
 */
class CheckBudget {
  private readonly deadline: number;

  /**
   * `closing` aborts when the application starts closing: Nest closes the HTTP server (and waits
   * for the probe's request) before the module's connection, so a check waiting for a frozen Redis
   * would hold `app.close()` up for its whole `timeout`, past `shutdownTimeout`.
   */
  constructor(
    readonly timeout: number,
    readonly closing: AbortSignal,
  ) {
    this.deadline = performance.now() + timeout;
  }

  /** Milliseconds left, 0 once spent. */
  left(): number {
    return Math.max(0, this.deadline - performance.now());
  }
}

/**
 * PINGs every master of `client` (a Cluster has several), all within the check's `budget`;
 * `details`: with their addresses and errors' texts (`showDetails`).
 */
async function pingMasters(client: RedisClient, budget: CheckBudget, details: boolean): Promise<RedisLockNodeHealth[]> {
  let targets: PingTarget[] | typeof TIMED_OUT;
  try {
    // A Cluster client that has not connected yet learns its masters first, within the bound too.
    targets = await settleWithin(driverFor(client).pingTargets(), budget.left(), [budget.closing]);
  } catch (error) {
    return [down(error, details)];
  }
  // No PING went out: the client never learned whom to send one to (a frozen seed node, say).
  if (targets === TIMED_OUT) return [{ status: 'down', error: `the Cluster's masters were not discovered within ${budget.timeout} ms: no node was PINGed` }];
  return Promise.all(targets.map((target) => ping(target, budget, details)));
}

async function ping(target: PingTarget, budget: CheckBudget, details: boolean): Promise<RedisLockNodeHealth> {
  const address = target.address === undefined || !details ? {} : { address: target.address };
  const startedAt = performance.now();
  try {
    const reply = await settleWithin(target.ping(), budget.left(), [budget.closing]);
    if (reply === TIMED_OUT) return { status: 'down', ...address, error: `no answer to PING within ${budget.timeout} ms` };
    return { status: 'up', ...address, latencyMs: Math.round((performance.now() - startedAt) * 10) / 10 };
  } catch (error) {
    return { ...down(error, details), ...address };
  }
}

function down(error: unknown, details: boolean): RedisLockNodeHealth {
  const text = String((error as Error)?.message ?? error);
  return { status: 'down', error: details ? text.slice(0, 200) : errorCode(error, text) };
}

/**
 * What an error may say on a health route open to anyone: the Redis error code of a refusal
 * (the first word of a Redis error reply, `READONLY`, `OOM`, `NOPERM`: why the locks are down),
 * or the client's system error code (`ECONNREFUSED`, `ENOTFOUND`), never the text, which may name
 * addresses, host names and ACL users.
 */
function errorCode(error: unknown, text: string): string {
  // ioredis and node-redis give the reply as Redis sent it; Valkey GLIDE names its kind
  // ("An error was signalled by the server: - ReadOnly: You can't write..."), or words a code it
  // has no name of its own for with a colon ("OOM: command not allowed ...", "BUSY: ...").
  const reply = /^([A-Z][A-Z_]{1,31})(?: |: |$)/.exec(text) ?? /^An error was signalled by the server: - ([A-Za-z]{2,32}):/.exec(text);
  if (reply !== null) return `Redis refused it: ${reply[1]}`;
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z0-9_]{1,31}$/.test(code)) return `the client could not reach Redis: ${code}`;
  return 'the client failed (showDetails: true shows its error)';
}

/**
 * A replica acknowledges every second: one whose last acknowledgement is older than this (or
 * than the WAIT timeout) is frozen or cut off, however long the master still lists it `online`
 * (until `repl-timeout`, 60 s by default), and `WAIT` would not count it.
 */
const MAX_REPLICA_LAG_S = 2;

/**
 * The replicas of the master `client` (an ioredis or iovalkey connection: the only kind
 * `waitForReplicas` takes) that would confirm an acquisition: online, with a `lag` (seconds
 * since their last acknowledgement) of at most `maxLag`, from `INFO replication`, within what is
 * left of the check's `budget`.
 */
async function replicasOnline(client: RedisClient, budget: CheckBudget, maxLag: number, details: boolean): Promise<{ online?: number; error?: string }> {
  try {
    const info = await settleWithin((client as unknown as { info(section: string): Promise<string> }).info('replication'), budget.left(), [budget.closing]);
    if (info === TIMED_OUT) return { error: `no answer to INFO replication within the check's ${budget.timeout} ms` };
    const confirming = info.split('\n').filter((line) => {
      if (!/^slave\d+:.*state=online/.test(line)) return false;
      const lag = /[:,]lag=(\d+)/.exec(line);
      return lag !== null && Number(lag[1]) <= maxLag;
    });
    return { online: confirming.length };
  } catch (error) {
    return { error: down(error, details).error };
  }
}

/** A quorum node: the server itself, or a Cluster that is up only when all its masters are. */
function asQuorumNode(masters: RedisLockNodeHealth[]): RedisLockNodeHealth {
  if (masters.length === 1) return masters[0]!;
  return { status: masters.every((master) => master.status === 'up') ? 'up' : 'down', masters };
}
