import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LockKeyError, LockService, OnOneInstance, WithoutOverlapping, type LockSkippedEvent } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { definitionRefusal, startJobApp } from './support.js';

// Found by review (forty-fifth session). `@Locked('tenant-sync:<0>')` locks one key per argument:
// a `<` always opens a placeholder there (docs/locks.md). The job decorators take `key` too, and
// a job method can be called directly with arguments (docs/jobs-and-leaders.md), but their key is
// used as written: `@WithoutOverlapping({ key: 'tenant-sync:<0>' })` on `sync(tenant)` was
// accepted, and every tenant's call took the one lock "tenant-sync:<0>": while tenant a synced,
// tenant b's call resolved undefined, skipped as `held-elsewhere`, with a debug line only.
describe('a job decorator given a key with a placeholder (<0>, <0.id>)', () => {
  const redis = useRedis();

  it.each([
    ['@WithoutOverlapping()', () => WithoutOverlapping({ key: 'tenant-sync:<0>' })],
    ['@OnOneInstance()', () => OnOneInstance({ key: 'tenant:<0.id>:sync' })],
  ] as const)('%s refuses it when the class is defined, naming the method, the key and the remedy', (decorator, make) => {
    const refused = definitionRefusal(() => {
      class TenantSync {
        @make()
        async sync(_tenant: unknown): Promise<void> {}
      }
      return TenantSync;
    });
    // It was undefined: the class was defined, and every call shared one lock.
    expect(refused).toBeInstanceOf(LockKeyError);
    const message = (refused as Error).message;
    expect(message).toContain(`${decorator} on TenantSync.sync`);
    expect(message).toMatch(/"tenant(-sync)?:<0(\.id)?>(:sync)?"/);
    expect(message).toContain('not a template');
    expect(message).toContain("@Locked('<key template>', { onBusy: 'skip' })");
  });

  it('still takes a key whose < > hold no placeholder, and a job with it runs under that key', async () => {
    @Injectable()
    class Compare {
      runs = 0;
      @WithoutOverlapping({ key: 'a<b>c<>' })
      async run(): Promise<string> {
        this.runs++;
        return redis.exists('lock:{a<b>c<>}').then(String);
      }
    }
    const app = await startJobApp([Compare]);
    const skips: LockSkippedEvent[] = [];
    app.get(LockService).events$.subscribe((event) => event.type === 'skipped' && skips.push(event));
    expect(await app.get(Compare).run()).toBe('1');
    expect(skips).toEqual([]);
  });
});
