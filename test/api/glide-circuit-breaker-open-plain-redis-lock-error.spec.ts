import { GlideClient } from '@valkey/valkey-glide';
import { expect, it, onTestFinished } from 'vitest';
import { FencedRedis, LockService, RedisUnavailableError } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { startRedisServer } from '../support/redis-server.js';
import { terminusLockModule } from '../support/terminus-app.js';

/**
 * Valkey GLIDE 2.5's `clientCircuitBreaker`: once enough of a client's commands failed (its server
 * gone for longer than its reconnects, each command timing out), GLIDE refuses every command
 * unsent, at once, with a `CircuitBreakerError` ("Client circuit breaker is open - core unhealthy"),
 * until a probe after its `openTimeoutMs` finds the server back. That passes: isLocked(),
 * tryAcquire(), inspect() and extend() are a `RedisUnavailableError` (503 with Retry-After), as the timeouts
 * before it were, and a FencedRedis write or read was not sent, nothing written.
 *
 * Found by review (session 50): the lock calls were a plain RedisLockError, "Redis could not be
 * asked (Client circuit breaker is open ...)", a 500 that Nest logs as a bug; a fenced write said it
 * "may have been applied" (read its token before writing again) though GLIDE never sent it, and a
 * plain read rejected with the bare CircuitBreakerError. Shown by the client's own error, not by time.
 */
it('GLIDE: a client whose circuit breaker opened fails the lock calls as Redis unavailable, and the fenced calls as not sent', { timeout: 60_000 }, async () => {
  const server = await startRedisServer();
  onTestFinished(() => server.stop());
  const { hostname, port } = new URL(server.url);
  const client = await GlideClient.createClient({
    addresses: [{ host: hostname, port: Number(port) }],
    requestTimeout: 500,
    // Opens after a few failures, and stays open past the test.
    clientCircuitBreaker: { minErrors: 3, failureRateThreshold: 0.1, windowSizeMs: 30_000, openTimeoutMs: 120_000, countTimeouts: true },
  });
  onTestFinished(() => client.close());
  const moduleRef = await terminusLockModule(client, { shutdownTimeout: 600 });
  onTestFinished(() => moduleRef.close());
  const locks = moduleRef.get(LockService);
  const fenced = new FencedRedis(client as never);
  expect(await locks.isLocked('k')).toBe(false);
  // A lease long past the test: its renewals fail, and it is not lost meanwhile.
  const held = await locks.acquire('held', { ttl: 120_000 });
  await server.stop();
  // The breaker opens after its failures: the client's own command says so.
  await expect.poll(() => client.get('probe').then(() => 'answered', (error: Error) => error.constructor.name), { timeout: 30_000, interval: 100 }).toBe('CircuitBreakerError');
  const calls: Record<string, () => Promise<unknown>> = {
    isLocked: () => locks.isLocked('k'),
    tryAcquire: () => locks.tryAcquire('k2'),
    inspect: () => locks.inspect('k'),
    extend: () => held.extend(120_000),
    'FencedRedis.set': () => fenced.set('w:{a}', '1', 5),
    'FencedRedis.get with a token': () => fenced.get('w:{a}', 5),
    'FencedRedis.get': () => fenced.get('w:{a}'),
    'FencedRedis.fence': () => fenced.fence('w:{a}'),
  };
  for (const [name, call] of Object.entries(calls)) {
    const error = await call().then(
      () => new Error('resolved'),
      (caught: unknown) => caught as Error,
    );
    // Failed: a plain RedisLockError ("Redis could not be asked (Client circuit breaker is open ...)"),
    // a fenced write "may have been applied", a plain read's bare CircuitBreakerError.
    expect(error, `${name}: ${error.message}`).toBeInstanceOf(RedisUnavailableError);
    expect((error.cause as Error | undefined)?.constructor.name, name).toBe('CircuitBreakerError');
    if (name.startsWith('FencedRedis')) expect(error.message, name).toMatch(/was not sent: its Redis client's circuit breaker is open/);
  }
  const health = await moduleRef.get(RedisLockHealthIndicator).isHealthy('redis', { timeout: 2_000 });
  expect((health as unknown as { redis: { status: string } }).redis.status).toBe('down');
});
