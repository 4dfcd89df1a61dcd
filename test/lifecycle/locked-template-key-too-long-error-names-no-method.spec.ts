import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockKeyError } from '../../lib/index.js';
import { RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// A @Locked template filled from a caller's argument (an id from a request) can build a key that
// no lock may have: longer than 1024 characters, or holding a lone surrogate. Every other way a
// template or key function fails at call time names the method (and the placeholder), e.g.
// "@Locked on Svc.byFunction: the key function returned a bad key. The lock key is 2000
// characters long..."; these two say only "The lock key is 2004 characters long", which names
// neither the method nor the argument that made it.
describe('a @Locked template whose argument makes a key too long or not well-formed', () => {
  const redis = useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  @Injectable()
  class Docs {
    runs = 0;
    @Locked('doc:<0>')
    async save(_id: string): Promise<void> {
      this.runs++;
    }
    @Locked((id: string) => `doc:${id}`)
    async byFunction(_id: string): Promise<void> {
      this.runs++;
    }
  }

  const start = async (): Promise<Docs> => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Docs] })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await ref.init();
    closers.push(() => ref.close());
    return ref.get(Docs);
  };

  it('fails with a LockKeyError naming the method and the placeholder, before the method runs', async () => {
    const docs = await start();
    // The key function's error names the method: the template's should too.
    const fromFunction = await docs.byFunction('x'.repeat(2000)).catch((error: unknown) => error);
    expect((fromFunction as Error).message).toContain('Docs.byFunction');

    const long = await docs.save('x'.repeat(2000)).catch((error: unknown) => error);
    expect(long).toBeInstanceOf(LockKeyError);
    const surrogate = await docs.save('a\uD800b').catch((error: unknown) => error);
    expect(surrogate).toBeInstanceOf(LockKeyError);
    expect(docs.runs).toBe(0);
    expect(await redis.keys('*')).toEqual([]);
    // Fails: 'The lock key is 2004 characters long; at most 1024 are allowed. ...'
    expect((long as Error).message).toContain('Docs.save');
    expect((long as Error).message).toContain('<0>');
    expect((surrogate as Error).message).toContain('Docs.save');
  });
});
