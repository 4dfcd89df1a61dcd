/**
 * Found by review (thirty-fourth session): the Terminus indicator reported each node's `address`
 * (`host:port`) and each error's text as the Redis client gave it, and Terminus answers a health
 * route with the whole result, `up` or `down`. That route is usually open to anyone (a probe, a
 * load balancer: docs/observability.md's example has no guard), so an anonymous GET /health
 * learnt the Redis servers' addresses and ports (checked here), and, while Redis refused the
 * check, the error's text as the client gave it: Redis 7.2 and later name the ACL user the
 * application logs in as there (`NOPERM User lock-svc has no permissions to run the 'eval'
 * command`; the 7.0 server of this suite says "this user"), a client's connection error names the
 * address or host name. A health check needs up or down and which node: the result says that
 * now (a node by its place, an error by its Redis or system error code), and
 * `showDetails: true` adds the addresses and texts for a route only operators reach.
 */
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { LOCK_ACL } from '../support/least-privilege-acl.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { terminusHttpApp } from '../support/terminus-app.js';

/** docs/observability.md's health controller, and the same check for operators. */
@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: RedisLockHealthIndicator,
  ) {}

  @Get() @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: 1_000 })]);
  }

  // Behind the application's admin guard, in an application of its own.
  @Get('operators') @HealthCheck()
  operators() {
    return this.health.check([() => this.locks.isHealthy('locks', { timeout: 1_000, showDetails: true })]);
  }
}

/** What any caller may be told of an error. */
const ERROR_CODE = /^(no answer to PING within 1000 ms|Redis refused it: [A-Z_]+|the client could not reach Redis: E[A-Z0-9_]+|the client failed \(showDetails: true shows its error\))$/;

describe('the Terminus indicator on an anonymous health route', () => {
  let server: RedisServer;
  let admin: Redis;
  let app: INestApplication | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
    // The test stops the server under it.
    admin.on('error', () => undefined);
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    admin.disconnect();
    await server.stop({ kill: true });
  });

  /** The application, logged in to Redis as `lock-svc` (docs/deployment.md's least-privilege user). */
  async function start(): Promise<string> {
    await admin.call('ACL', 'SETUSER', 'lock-svc', 'reset', ...LOCK_ACL);
    const started = await terminusHttpApp(`redis://lock-svc:lock-secret@127.0.0.1:${server.port}`, HealthController);
    app = started.app;
    return `${started.url}/health`;
  }
  const get = async (url: string) => {
    const response = await fetch(url);
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) as { info?: Record<string, any>; error?: Record<string, any> } };
  };

  it('names no address, port, user or password, up or down, and showDetails adds them', async () => {
    const url = await start();
    const secrets = ['127.0.0.1', `:${server.port}`, 'lock-svc', 'lock-secret'];
    const up = await get(url);
    expect(up.status).toBe(200);
    expect(up.body.info!.locks.nodes).toEqual([{ status: 'up', latencyMs: expect.any(Number) }]);
    for (const secret of secrets) expect(up.text).not.toContain(secret);
    const operators = await get(`${url}/operators`);
    expect(operators.body.info!.locks.nodes).toEqual([{ status: 'up', latencyMs: expect.any(Number), address: `127.0.0.1:${server.port}` }]);

    // The application's user may no longer run scripts: every lock and the check are refused.
    await admin.call('ACL', 'SETUSER', 'lock-svc', '-eval', '-evalsha');
    const refused = await get(url);
    expect(refused.status).toBe(503);
    expect(refused.body.error!.locks.nodes).toEqual([{ status: 'down', error: 'Redis refused it: NOPERM' }]);
    for (const secret of secrets) expect(refused.text).not.toContain(secret);
    const told = await get(`${url}/operators`);
    expect(told.body.error!.locks.nodes).toEqual([{ status: 'down', address: `127.0.0.1:${server.port}`, error: expect.stringMatching(/^NOPERM .*'eval'/) }]);
    expect(told.text).not.toContain('lock-secret');

    // Redis gone: whatever the client says, it names no server.
    await server.stop({ kill: true });
    const gone = await get(url);
    expect(gone.status).toBe(503);
    expect(gone.body.error!.locks.nodes).toEqual([{ status: 'down', error: expect.stringMatching(ERROR_CODE) }]);
    for (const secret of secrets) expect(gone.text).not.toContain(secret);
    await server.start();
  });

  it('refuses a showDetails that is no boolean, naming it', async () => {
    await start();
    const indicator = app!.get(RedisLockHealthIndicator);
    await expect(indicator.isHealthy('locks', { showDetails: 'false' as never })).rejects.toThrow(InvalidLockOptionsError);
    await expect(indicator.isHealthy('locks', { showDetails: 'false' as never })).rejects.toThrow('RedisLockHealthIndicator.isHealthy: Option "showDetails" must be a boolean');
  });
});
