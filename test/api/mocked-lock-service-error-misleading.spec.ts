import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

@Injectable()
class OrdersService {
  constructor(readonly locks: LockService) {}

  @Locked('order:<0>')
  async pay(orderId: string): Promise<string> {
    return `paid ${orderId}`;
  }
}

/** A hand-written fake, as Nest's testing recipe (`useValue`, `overrideProvider`) has users write. */
const fakeLocks = { using: async (_key: string, fn: (lock: unknown) => unknown) => fn({}) };

const outcome = (error: unknown): string => `${(error as Error).constructor.name}: ${(error as Error).message}`;

/**
 * Found by review of what a newcomer meets first. Replacing `LockService` by a fake, the standard
 * Nest recipe for a dependency in tests (`{ provide: LockService, useValue: fake }`, or
 * `.overrideProvider(LockService).useValue(fake)` on an application that imports
 * `RedisLockModule.forRoot()`), failed in ways that misled:
 * - a `@Locked` method's call said it "has no LockService: the instance must be created by Nest,
 *   in a module that imports RedisLockModule" (lib/decorators/locked.decorator.ts, `runnerOf`),
 *   when it had one, the fake, and importing RedisLockModule was not what the test wanted;
 * - with `RedisLockModule.forRoot()` imported, the startup failed with
 *   `TypeError: Cannot read properties of undefined (reading 'close')`: the explorer read the
 *   fake's engine (lib/scheduling/lock-scheduling.explorer.ts), and its clean-up after that
 *   failure threw in turn, hiding even the first TypeError.
 * Neither said what docs/testing.md offers for this: RedisLockTestingModule.
 */
describe('LockService replaced by a fake', () => {
  it('a @Locked method says its LockService is not the library\'s, and points to RedisLockTestingModule', async () => {
    const moduleRef = await Test.createTestingModule({ providers: [OrdersService, { provide: LockService, useValue: fakeLocks }] }).compile();
    await moduleRef.init();
    try {
      const error = await moduleRef.get(OrdersService).pay('1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisLockError);
      expect(outcome(error)).toContain('not a LockService');
      expect(outcome(error)).toContain('RedisLockTestingModule');
    } finally {
      await moduleRef.close();
    }
  });

  it('beside RedisLockModule.forRoot(), the startup fails with a RedisLockError that says so, not a TypeError', async () => {
    const error = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true })], providers: [OrdersService] })
      .overrideProvider(LockService)
      .useValue(fakeLocks)
      .setLogger(new CapturedLogs())
      .compile()
      .then(async (moduleRef) => {
        try {
          await moduleRef.init();
          return 'started';
        } catch (e) {
          return e;
        }
      });
    expect(outcome(error)).toContain('not a LockService');
    expect(outcome(error)).toContain('RedisLockTestingModule');
    expect(error).toBeInstanceOf(RedisLockError);
  });
});
