import { Controller, Get, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

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
  let servers: RedisServer[];
  let app: INestApplication | undefined;
  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    for (const server of servers) server.resume();
  });
  afterAll(() => Promise.all(servers.map((server) => server.stop())));

  async function start(redis: string | string[]): Promise<string> {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis, ttl: 600, renewInterval: 100, waitTimeout: 0 })],
      controllers: [HealthController],
      providers: [RedisLockHealthIndicator],
    })
      .setLogger(new CapturedLogs())
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    return `${await app.getUrl()}/health`.replace('[::1]', '127.0.0.1');
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

  it('rejects a bad timeout with an error naming it', async () => {
    await start(servers[0]!.url);
    await expect(app!.get(RedisLockHealthIndicator).isHealthy('x', { timeout: -1 })).rejects.toThrow(/isHealthy: Option "timeout"/);
  });
});
