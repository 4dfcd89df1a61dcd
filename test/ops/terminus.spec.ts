import { Controller, Get, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Cluster, Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { LockService, RedisLockModule, type Duration, type LockEvent } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import { LockHealthStats } from '../../lib/terminus/lock-health-stats.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';
import { startRedisCluster, type RedisCluster } from '../../scripts/redis-cluster.mjs';
import { nodeRedisCluster, type TestClient } from '../support/node-redis.js';
import { terminusHttpApp } from '../support/terminus-app.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: RedisLockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: 1_000 })]);
  }

  @Get('strict')
  @HealthCheck()
  strict() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: 1_000, requireAllNodes: true })]);
  }
}

describe('RedisLockHealthIndicator over HTTP with terminus', () => {
  const servers = useQuorumServers();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    for (const server of servers) server.resume();
  });

  async function start(redis: string | string[]): Promise<string> {
    const started = await terminusHttpApp(redis, HealthController, { ttl: 600, renewInterval: 100, waitTimeout: 0 });
    app = started.app;
    return `${started.url}/health`;
  }
  const get = async (url: string) => {
    const response = await fetch(url);
    return { status: response.status, body: (await response.json()) as any };
  };

  it('is up with Redis, down while Redis is dead, up again when it is back; reports renewals and losses', async () => {
    const server = servers[0]!;
    const url = await start(server.url);
    const up = await get(url);
    expect(up.status).toBe(200);
    expect(up.body.info.locks).toMatchObject({ status: 'up', nodes: [{ status: 'up' }], locksLostRecently: 0, renewalLatency: null });
    expect(up.body.info.locks.quorum).toBeUndefined();

    // A renewal, then a loss: someone deletes the lock behind the holder's back.
    const locks = app!.get(LockService);
    const lock = await locks.acquire('health:1');
    await expect.poll(async () => (await get(url)).body.info.locks.renewalLatency?.count ?? 0, { timeout: 5_000 }).toBeGreaterThan(0);
    const spy = new Redis(server.url);
    await spy.del('lock:{health:1}');
    spy.disconnect();
    await expect.poll(() => lock.signal.aborted, { timeout: 5_000 }).toBe(true);
    const afterLoss = await get(url);
    expect(afterLoss.body.info.locks.locksLostRecently).toBe(1);
    expect(afterLoss.body.info.locks.renewalLatency.maxMs).toBeGreaterThanOrEqual(0);

    await server.stop({ kill: true });
    const down = await get(url);
    expect(down.status).toBe(503);
    expect(down.body.error.locks).toMatchObject({ status: 'down', nodes: [{ status: 'down' }] });

    await server.start();
    await expect.poll(async () => (await get(url)).status, { timeout: 15_000, interval: 200 }).toBe(200);
  });

  it('in quorum mode, reports each node and the quorum: degraded with one node frozen, down without a majority', async () => {
    const url = await start(servers.map((server) => server.url));
    expect((await get(url)).body.info.locks).toMatchObject({ status: 'up', quorum: { state: 'ok', answering: 3, needed: 2, nodes: 3 } });
    servers[1]!.pause();
    const degraded = await get(url);
    expect(degraded.status).toBe(200);
    expect(degraded.body.info.locks).toMatchObject({ status: 'up', quorum: { state: 'degraded', answering: 2 } });
    expect(degraded.body.info.locks.nodes.map((node: { status: string }) => node.status)).toEqual(['up', 'down', 'up']);
    expect((await get(`${url}/strict`)).status).toBe(503);
    servers[2]!.pause();
    const lost = await get(url);
    expect(lost.status).toBe(503);
    expect(lost.body.error.locks).toMatchObject({ status: 'down', quorum: { state: 'lost', answering: 1 } });
    servers[1]!.resume();
    servers[2]!.resume();
    await sleep(50);
    await expect.poll(async () => (await get(url)).status, { timeout: 5_000 }).toBe(200);
  });

  it('listens to lock events only while someone asks: not before the first check, not after a quiet period', async () => {
    const url = await start(servers[0]!.url);
    const locks = app!.get(LockService);
    const manager = locks[LOCK_RUNNER] as LockManager;
    // Nothing built an event yet: no renewal of any lock pays for the indicator.
    expect(manager.listening).toBe(false);
    await (await locks.acquire('quiet:1')).release();
    expect(manager.listening).toBe(false);

    const first = await get(url);
    expect(first.body.info.locks).toMatchObject({ status: 'up', renewalLatency: null, locksLostRecently: 0 });
    expect(Date.parse(first.body.info.locks.statsSince)).toBeGreaterThan(0);
    expect(manager.listening).toBe(true);
    const lock = await locks.acquire('quiet:2');
    await expect.poll(async () => (await get(url)).body.info.locks.renewalLatency?.count ?? 0, { timeout: 5_000 }).toBeGreaterThan(0);
    await lock.release();

    // Nobody asked for longer than the quiet period (on the monotonic clock, which the wall
    // clock's steps do not move): the next event ends the subscription.
    const now = performance.now.bind(performance);
    const later = vi.spyOn(performance, 'now').mockImplementation(() => now() + 11 * 60_000);
    try {
      await (await locks.acquire('quiet:3')).release();
      expect(manager.listening).toBe(false);
      // Asking again starts afresh.
      expect((await get(url)).body.info.locks.renewalLatency).toBeNull();
      expect(manager.listening).toBe(true);
    } finally {
      later.mockRestore();
    }
    await app!.close();
    app = undefined;
    expect(manager.listening).toBe(false);
  });

  it('counts per second, so that thousands of renewals a second still cover the whole minute', () => {
    const stats = new LockHealthStats();
    const now = 1_800_000_000_000;
    const renewed = (at: number, latencyMs: number): LockEvent => ({ type: 'renewed', key: 'k', fencingToken: 1, latencyMs, at }) as LockEvent;
    // A slow renewal 55 s ago, then 5,000 fast ones a second for the rest of the minute.
    stats.record(renewed(now - 55_000, 480), now - 55_000);
    let count = 1;
    for (let at = now - 54_000; at <= now; at += 0.2, count++) stats.record(renewed(Math.floor(at), 2), Math.floor(at));
    expect(stats.renewalLatency(now)).toEqual({ lastMs: 2, maxMs: 480, count });
    // Older than a minute: gone, whatever the rate.
    expect(stats.renewalLatency(now + 6_000)?.maxMs).toBe(2);
    expect(stats.renewalLatency(now + 62_000)).toBeUndefined();
    // Losses: every one of the last five minutes counts, a shutdown's never does.
    for (let i = 0; i < 3_000; i++) stats.record({ type: 'lost', key: 'k', fencingToken: i, reason: 'refused', heldMs: 1, at: now - 290_000 + i } as LockEvent, now - 290_000 + i);
    stats.record({ type: 'lost', key: 'k', fencingToken: 0, reason: 'shutdown', heldMs: 1, at: now } as LockEvent, now);
    expect(stats.lostRecently(now)).toBe(3_000);
    expect(stats.lostRecently(now + 20_000)).toBe(0);
  });

  // Found by review: the stats counted by the event's own `at`, the wall clock, against
  // `Date.now()`; a step of the system clock (a VM resumed, an NTP correction) moved a loss out of
  // the window, and the health check said no lock was lost. They count by the monotonic clock as
  // events arrive now.
  it('counts a loss whatever the wall clock says of it (a step of the system clock)', () => {
    const stats = new LockHealthStats();
    stats.record({ type: 'lost', key: 'k', fencingToken: 1, reason: 'expired', heldMs: 1, at: Date.now() + 20 * 60_000 } as LockEvent);
    stats.record({ type: 'renewed', key: 'k', fencingToken: 1, latencyMs: 7, at: Date.now() - 20 * 60_000 } as LockEvent);
    expect({ lost: stats.lostRecently(), renewal: stats.renewalLatency()?.lastMs }).toEqual({ lost: 1, renewal: 7 });
  });

  it('rejects a bad timeout with an error naming it', async () => {
    await start(servers[0]!.url);
    await expect(app!.get(RedisLockHealthIndicator).isHealthy('x', { timeout: -1 })).rejects.toThrow(/isHealthy: Option "timeout"/);
  });
});

interface OpenedCluster {
  client: unknown;
  close(): Promise<void>;
}

describe.each([
  ['ioredis', async (nodes: RedisCluster['nodes']): Promise<OpenedCluster> => {
    const client = new Cluster(nodes);
    return { client, close: async (): Promise<void> => client.disconnect() };
  }],
  ['node-redis', async (nodes: RedisCluster['nodes']): Promise<OpenedCluster> => {
    const client: TestClient = await nodeRedisCluster(nodes);
    // `close()` would wait for the replies of the dead master: `destroy()` drops them.
    return { client, close: async (): Promise<void> => (client as unknown as { destroy(): void }).destroy() };
  }],
])('RedisLockHealthIndicator on a Redis Cluster of 3 masters (%s)', (_library, connect) => {
  let cluster: RedisCluster;
  let opened: OpenedCluster | undefined;
  let app: INestApplication | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await opened?.close();
    await cluster?.stop();
  });

  it('PINGs every master and names each; one frozen or killed master reads down', async () => {
    opened = await connect(cluster.nodes);
    const client = opened.client as Cluster;
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis: client })],
      providers: [RedisLockHealthIndicator],
    })
      .setLogger(new CapturedLogs())
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const indicator = app.get(RedisLockHealthIndicator);
    const health = app.get(HealthCheckService);
    // A frozen master reads down only once the check's time is up (500 ms); a check of masters
    // that all answer ends with their last PONG, so it is given the longest time the option takes
    // (a loaded worker may read a PONG, or the Cluster's slots, after 500 ms).
    const check = async (timeout: Duration = 500) => {
      try {
        return { ok: true, result: (await health.check([() => indicator.isHealthy('locks', { timeout, showDetails: true })])).info!.locks as any };
      } catch (error) {
        return { ok: false, result: (error as { response: { error: { locks: any } } }).response.error.locks };
      }
    };
    const addresses = cluster.nodes.map((node) => `${node.host}:${node.port}`).sort();
    const byAddress = (result: { nodes: { address: string; status: string }[] }) =>
      Object.fromEntries(result.nodes.map((node) => [node.address, node.status]));

    const up = await check('60s');
    expect(up.ok).toBe(true);
    expect(up.result.nodes.map((node: { address: string }) => node.address)).toEqual(addresses);
    expect(up.result.nodes.every((node: { status: string; latencyMs: number }) => node.status === 'up' && node.latencyMs >= 0)).toBe(true);

    // Frozen: its connection stays open and answers nothing.
    const frozen = `${cluster.nodes[1]!.host}:${cluster.nodes[1]!.port}`;
    cluster.pause(1);
    try {
      // Every check reads the frozen master down; checked until one where the living masters'
      // PONGs were read within its time too (a loaded worker may read them late: down, no answer).
      for (;;) {
        const paused = await check();
        expect(paused.ok).toBe(false);
        expect(paused.result.status).toBe('down');
        const seen = byAddress(paused.result);
        expect(Object.keys(seen).sort()).toEqual(addresses);
        expect(seen[frozen]).toBe('down');
        if (addresses.every((address) => address === frozen || seen[address] === 'up')) break;
      }
    } finally {
      cluster.resume(1);
    }
    // Resumed, it answers its PINGs again: up, with the others.
    const resumed = await check('60s');
    expect({ ok: resumed.ok, nodes: byAddress(resumed.result) }).toEqual({ ok: true, nodes: Object.fromEntries(addresses.map((address) => [address, 'up'])) });

    // Killed: the client drops its connection; the master still serves its slots in the map, so it is still named.
    const killed = `${cluster.nodes[2]!.host}:${cluster.nodes[2]!.port}`;
    await cluster.kill(2);
    // Past the cluster's node timeout (2 s) and ioredis' slot refresh (5 s): still named, still down.
    const until = performance.now() + 7_000;
    while (performance.now() < until) {
      const gone = await check();
      expect(gone.ok).toBe(false);
      const seen = byAddress(gone.result);
      // The living masters by address, up; the killed one down. node-redis may have refreshed its
      // slot map meanwhile (a loaded machine's CI once got ":0" for it, the address CLUSTER SLOTS
      // gives a failed node): it is then down under that name.
      for (const address of addresses) if (address !== killed) expect(seen[address]).toBe('up');
      expect(Object.entries(seen).filter(([address]) => !addresses.includes(address) || address === killed)).toEqual([[expect.stringMatching(new RegExp(`^(${killed.replace(/\./g, '\\.')}|:0)$`)), 'down']]);
      await sleep(500);
    }
  }, 60_000);
});
