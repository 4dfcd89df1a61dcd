import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockModule, type LockEvent } from '../lib/index.js';
import { redisUrl, useRedis } from './support/redis.js';

const byId = (id: string): string => `job:${id}:${'x'.repeat(10)}`;

@Injectable()
class Jobs {
  @Locked('one:<0>')
  async template(_id: string): Promise<void> {}

  @Locked(byId)
  async fn(_id: string): Promise<void> {}

  @Locked(['a:<0>', 'b:<0>'])
  async templates(_id: string): Promise<void> {}

  /** Not in the types (`readonly string[]`), but taken at run time: a JavaScript caller, or a cast. */
  @Locked(['a:<0>', byId] as unknown as string[])
  async mixed(_id: string): Promise<void> {}
}

/**
 * Found by review. docs/observability.md: "`lock.name` is the `@Locked` key template (`order:<0>`) ...
 * never the key". An array whose element is a key function was named by `key.join(',')`
 * (locked.decorator.ts), the function's source text: neither a template nor what a user named.
 */
describe('the name of a @Locked lock', () => {
  useRedis();
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('is the template, the templates, or the method for a key function, never a function source', async () => {
    moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl() })],
      providers: [Jobs],
    }).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    // A multi-key lock tells `acquired` for each of its keys, under the one name.
    const names: string[] = [];
    const subscription = locks.events$.subscribe((event: LockEvent) => {
      if (event.type === 'acquired' && !names.includes(event.name ?? '')) names.push(event.name ?? '');
    });
    const jobs = moduleRef.get(Jobs);
    await jobs.template('1');
    await jobs.fn('1');
    await jobs.templates('1');
    await jobs.mixed('1');
    subscription.unsubscribe();
    expect(names).toEqual(['one:<0>', 'Jobs.fn', 'a:<0>,b:<0>', 'Jobs.mixed']);
  });
});
