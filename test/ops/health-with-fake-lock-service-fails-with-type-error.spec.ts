import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { describe, expect, it } from 'vitest';
import { LockService, RedisLockError } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Found by review. A test that provides a fake `LockService` (`useValue`, as docs/testing.md
 * describes and advises against) beside `RedisLockHealthIndicator` got, from `isHealthy()`, a
 * `TypeError: Cannot read properties of undefined (reading 'shuttingDown')`: the indicator reads
 * the service's engine, which a fake has not. `@Locked` methods, jobs and elections refuse such a
 * fake with a `RedisLockError` that says what it is and what to use instead
 * (`RedisLockTestingModule`); the indicator now does the same.
 */
describe('RedisLockHealthIndicator given a fake LockService', () => {
  it('refuses it with a RedisLockError naming the indicator and the remedy', async () => {
    const fake = { acquire: async () => ({}), inspect: async () => ({}) };
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false })],
      providers: [RedisLockHealthIndicator, { provide: LockService, useValue: fake }],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      const failure = await moduleRef.get(RedisLockHealthIndicator).isHealthy('locks').then(() => undefined, (error: unknown) => error);
      // Before the fix: TypeError: Cannot read properties of undefined (reading 'shuttingDown').
      expect(failure).toBeInstanceOf(RedisLockError);
      expect((failure as Error).message).toContain('RedisLockHealthIndicator');
      expect((failure as Error).message).toContain('RedisLockTestingModule');
    } finally {
      await moduleRef.close();
    }
  });
});
