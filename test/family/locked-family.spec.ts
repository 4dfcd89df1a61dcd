import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockKeyError, LockService, Locked, type MultiKeyLock } from '../../lib/index.js';
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

@Injectable()
class LedgerService {
  readonly balances = new Map<string, number>([
    ['a', 100],
    ['b', 100],
    ['c', 100],
  ]);
  constructor(readonly locks: LockService) {}

  @Locked(['account:<0>', 'account:<1>'], { waitTimeout: 10_000 })
  async transfer(from: string, to: string, amount: number): Promise<Readonly<Record<string, number>>> {
    const [a, b] = [this.balances.get(from)!, this.balances.get(to)!];
    await new Promise((resolve) => setImmediate(resolve));
    this.balances.set(from, a - amount);
    this.balances.set(to, b + amount);
    return (this.locks.current() as MultiKeyLock).fencingTokens;
  }
}

describe('@Locked with an array of templates: a multi-key lock', () => {
  it('locks every key of the call, in any direction, without deadlock', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks() })], providers: [LedgerService] }).compile();
    await moduleRef.init();
    try {
      const ledger = moduleRef.get(LedgerService);
      const pairs = [['a', 'b'], ['b', 'a'], ['b', 'c'], ['c', 'a'], ['a', 'c'], ['c', 'b']] as const;
      const tokens = await Promise.all(Array.from({ length: 60 }, (_, i) => ledger.transfer(pairs[i % 6]![0], pairs[i % 6]![1], 1 + (i % 7))));
      expect([...ledger.balances.values()].reduce((sum, balance) => sum + balance, 0)).toBe(300);
      expect(Object.keys(tokens[0]!).sort()).toEqual(['account:a', 'account:b']);
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses an empty array of templates when the class is defined', () => {
    expect(() => {
      class Bad {
        @Locked([])
        async run(): Promise<void> {}
      }
      return Bad;
    }).toThrow(LockKeyError);
  });

  // Found by review (thirty-eighth session): refused only at the first call, by the multi-key
  // lock's own bound, where every other mistake in the templates is refused here.
  it('refuses more templates than a multi-key lock can take when the class is defined', () => {
    const templates = Array.from({ length: 1_001 }, (_, i) => `part:${i}`);
    expect(() => {
      class Bad {
        @Locked(templates)
        async run(): Promise<void> {}
      }
      return Bad;
    }).toThrow(/^@Locked on Bad\.run: at most 1000 key templates can be locked together, got 1001\.$/);
  });
});

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
