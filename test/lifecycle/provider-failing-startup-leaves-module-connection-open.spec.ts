import { fileURLToPath } from 'node:url';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { runRefusedStartup } from '../support/refused-startup.js';
import { redisUrl, useRedis } from '../support/redis.js';

const fixture = fileURLToPath(new URL('./fixtures/failed-startup.mjs', import.meta.url));

/**
 * Found by review (thirty-third session). The bar of test/lifecycle/refused-startup-keeps-process-alive.spec.ts
 * (a startup that fails leaves nothing open, so a bootstrap that catches the error exits on its
 * own) held only for the startups the module itself refuses. A provider of the application
 * failing its startup (a database it cannot reach) left the module's own ioredis connection,
 * opened by `LockService`'s constructor (lib/core/stores/redis/redis-connection.ts), open and
 * reconnecting for good: Nest runs no shutdown hook for a startup that fails, and hands the
 * application to nobody who could close it (`createApplicationContext()` rejects without it;
 * `create()` with `abortOnError: false` too). That is:
 * - a constructor (or factory) that throws, under `abortOnError: false` (with Nest's default,
 *   true, Nest ends the process itself: `process.exit(1)`);
 * - an `onModuleInit` that throws, whatever `abortOnError` (Nest's hooks run outside its
 *   exception zone), through `createApplicationContext()` or `create()` + `listen()`.
 * The connection is now made unconnected and connects in `LockService.onApplicationBootstrap`,
 * after every `onModuleInit` (or at a first lock call before).
 */
describe('a startup failed by a provider of the application, beside RedisLockModule with a URL', () => {
  const redis = useRedis();

  const fails: [string, Record<string, string>][] = [
    ['its constructor, in createApplicationContext(), abortOnError false', { FAIL_IN: 'constructor', ENTRY: 'context', ABORT_ON_ERROR: 'false' }],
    ['its constructor, in create(), abortOnError false', { FAIL_IN: 'constructor', ENTRY: 'listen', ABORT_ON_ERROR: 'false' }],
    ['its onModuleInit, in createApplicationContext()', { FAIL_IN: 'onModuleInit', ENTRY: 'context' }],
    ['its onModuleInit, in listen()', { FAIL_IN: 'onModuleInit', ENTRY: 'listen' }],
  ];
  for (const [where, env] of fails) {
    it(`in ${where}: leaves no connection open, the process exits on its own`, { timeout: 60_000 }, async () => {
      const outcome = await runRefusedStartup(fixture, { REDIS_URL: redisUrl(), ...env });
      expect(outcome.refused, outcome.stderr).toBe(`Error: billing database unreachable (in ${env.FAIL_IN})`);
      // Before: still running 15 s later, a TCPSocketWrap (the module's ioredis connection) open.
      expect({ exited: outcome.exited, resources: outcome.resources }).toMatchObject({ exited: true });
    });
  }

  it('control: a constructor that throws under abortOnError true (Nest\'s default) has Nest end the process', { timeout: 60_000 }, async () => {
    const outcome = await runRefusedStartup(fixture, { REDIS_URL: redisUrl(), FAIL_IN: 'constructor', ENTRY: 'context' });
    expect(outcome.refused, outcome.stderr).toBeUndefined();
    expect(outcome.exited).toBe(true);
  });

  // docs/configuration.md ("A startup that fails"): past the module's onApplicationBootstrap (its
  // connection up, its elections started), a bootstrap that has the application in hand closes it.
  it('in its onApplicationBootstrap, in listen(), with an election running: app.close() in the catch gives all back and the process exits', { timeout: 60_000 }, async () => {
    const outcome = await runRefusedStartup(fixture, { REDIS_URL: redisUrl(), FAIL_IN: 'onApplicationBootstrap', ENTRY: 'listen', ELECTION: '1', CLOSE_ON_FAILURE: '1' });
    expect(outcome.refused, outcome.stderr).toBe('Error: billing database unreachable (in onApplicationBootstrap)');
    expect({ exited: outcome.exited, resources: outcome.resources }).toMatchObject({ exited: true });
    expect(await redis.exists('lock:{s33-feed}')).toBe(0);
  });
});

/**
 * What the fix must keep: the module's own connection, made unconnected until the application
 * starts, is asked before (a lock call in an `onModuleInit`). Under ioredis options with
 * `enableOfflineQueue: false` ioredis refuses a command sent before the connection is ready
 * ("Stream isn't writeable and enableOfflineQueue options is false"): until it first is, the
 * connection holds the commands sent meanwhile.
 */
describe('a lock call before the application starts, own ioredis options with enableOfflineQueue: false', () => {
  useRedis();

  it('is answered, not refused for a connection not ready', { timeout: 20_000 }, async () => {
    const { hostname, port, pathname } = new URL(redisUrl());
    const warmup = {
      outcome: undefined as unknown,
      async onModuleInit(this: { outcome: unknown; locks?: LockService }): Promise<void> {
        this.outcome = await this.locks!.tryAcquire('s33-warmup').then(
          (lock) => (lock === null ? 'busy' : lock.release().then(() => 'acquired')),
          (error: Error) => `${error.name}: ${error.message}`,
        );
      },
    };
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: { host: hostname, port: Number(port), db: Number(pathname.slice(1)), enableOfflineQueue: false } })],
      providers: [{ provide: 'WARMUP', inject: [LockService], useFactory: (locks: LockService) => Object.assign(warmup, { locks }) }],
    })
      .setLogger(new CapturedLogs())
      .compile();
    try {
      await moduleRef.init();
      expect(warmup.outcome).toBe('acquired');
    } finally {
      await moduleRef.close();
    }
  });
});
