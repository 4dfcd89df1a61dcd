import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, Locked } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { sleep } from '../support/lock-app.js';

@Injectable()
class ExportService {
  inside = 0;
  most = 0;
  readonly tokens: number[] = [];
  constructor(readonly locks: LockService) {}

  @Locked('export:<0>', { limit: 2, waitTimeout: 10_000 })
  async run(tenant: string): Promise<string> {
    this.most = Math.max(this.most, ++this.inside);
    this.tokens.push(this.locks.current()!.fencingToken);
    await sleep(20);
    this.inside--;
    return tenant;
  }
}

describe('@Locked with { limit }: a semaphore per key template', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('lets at most `limit` calls of one key run at once', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() })], providers: [ExportService] }).compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    const service = moduleRef.get(ExportService);
    const results = await Promise.all(Array.from({ length: 8 }, () => service.run('acme')));
    expect(results).toEqual(Array(8).fill('acme'));
    expect(service.most).toBe(2);
    expect(new Set(service.tokens).size).toBe(8);
  });

  it('refuses a bad limit when the class is defined', () => {
    expect(() => {
      class Bad {
        @Locked('export:<0>', { limit: 0 })
        async run(_tenant: string): Promise<void> {}
      }
      return Bad;
    }).toThrow(InvalidLockOptionsError);
    expect(() => {
      class Bad {
        @Locked('export:<0>', { limit: 2, permits: 3 })
        async run(_tenant: string): Promise<void> {}
      }
      return Bad;
    }).toThrow(/@Locked on Bad\.run: Option "permits"/);
  });
});
