/**
 * Left from the fortieth session's review of job names: `@Locked`'s `Class.method` went into log
 * lines and errors as it is, while every key in them is quoted, escaped and cut (quoteKey), and a
 * job's `Class.method` now is too. A class or method name is the user's text: a computed method
 * name (or a class name set at runtime) can hold a newline that forges a log line, a
 * bidirectional override, or thousands of characters.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

const method = `feed\nWARN [RedisLock] forged line ${'x'.repeat(5_000)}`;

@Injectable()
class ShownFeeds {
  /** Not declared as returning an Observable: held until subscribed, and a warning names the method when nobody subscribes within the ttl. */
  @Locked('shown-feed', { ttl: 400 })
  [method](): any {
    return of('item');
  }
}

describe('a @Locked method whose class and method names are not plain identifiers', () => {
  useRedis();

  it('is named in its log lines escaped and cut, as keys are', async () => {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [ShownFeeds] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    try {
      const feeds = moduleRef.get(ShownFeeds) as unknown as Record<string, () => Promise<unknown>>;
      await feeds[method]!();
      const named = () => logs.lines.filter((line) => line.message.includes('ShownFeeds.'));
      await expect.poll(() => named().length, { timeout: 5_000 }).toBeGreaterThan(0);
      // Failed: "ShownFeeds.feed\nWARN [RedisLock] forged line xxx...: the Observable it returned was
      // not subscribed within the lock's ttl", the newline raw and all 5,000 characters.
      for (const { message } of named()) {
        expect(message).not.toContain('\n');
        expect(message.length).toBeLessThan(800);
        expect(message).toContain('"ShownFeeds.feed\\nWARN [RedisLock] forged line');
      }
    } finally {
      await moduleRef.close();
    }
  });

  it('is named in a decoration-time error escaped and cut', () => {
    let error: unknown;
    try {
      class Twice {
        @Locked('twice')
        @Locked('twice')
        [method](): void {}
      }
      void Twice;
    } catch (caught) {
      error = caught;
    }
    const message = (error as Error).message;
    expect(message).toContain('already locked by another @Locked');
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(600);
  });
});
