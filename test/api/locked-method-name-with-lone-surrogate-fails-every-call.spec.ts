/**
 * Defect (today's fix 8a0c7ce is incomplete): the fix made job lock names well-formed (a method
 * named by a computed key holding a lone surrogate: lone surrogates read as U+FFFD in names,
 * lib/scheduling/job-spec.ts boundName), but `@Locked` builds its lock name from the same
 * `Class.method` text when its key is a function (lib/decorators/locked.decorator.ts: `template`
 * is `where`, cut to 128 characters, without the replacement). `LockOptions.name` refuses a lone
 * surrogate (checkLockNaming), so such a method is accepted when the class is defined and then
 * every call fails with an InvalidLockOptionsError about an option `name` the user never gave.
 *
 * Promise: docs/locks.md (`name` of a @Locked method is the template, or the method for a key
 * function); the bar: "bad input gets a clear error naming the method, option or argument";
 * the CHANGELOG (8a0c7ce): "a job method whose name holds a lone surrogate started, then every
 * call failed on the lock name the library built from it".
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

const method = 'sync\uD83D';

@Injectable()
class SurrogateService {
  runs = 0;

  @Locked(() => 'surrogate-key')
  async [method](): Promise<string> {
    this.runs++;
    return 'ran';
  }
}

describe('a @Locked method whose name holds a lone surrogate, with a key function', () => {
  const redis = useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('runs under its lock, never failing each call over a lock name it was not given', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [SurrogateService] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    const service = moduleRef.get(SurrogateService) as unknown as Record<string, () => Promise<string>> & { runs: number };
    const outcome = await service[method]!().then(
      (value) => value,
      (error: Error) => `${error.constructor.name}: ${error.message}`,
    );
    // Fails: 'InvalidLockOptionsError: Option "name" must be a well-formed string ... got "SurrogateService.sync\ud83d"'.
    expect(outcome).toBe('ran');
    expect(service.runs).toBe(1);
    expect(await redis.exists('lock:{surrogate-key}')).toBe(0);
  });
});
