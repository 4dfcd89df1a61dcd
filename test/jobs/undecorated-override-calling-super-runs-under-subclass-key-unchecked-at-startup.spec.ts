/**
 * Found by review (forty-third session). A subclass that overrides an `@OnOneInstance()` /
 * `@WithoutOverlapping()` job method WITHOUT decorating its override, and calls `super.run()`:
 * the override is no job (no spec of its own, and its base's `@Cron()` is not on it), but the
 * base class' wrapper it calls binds to the instance's class, so it runs under the subclass' key.
 * What a user gets, as docs/jobs-and-leaders.md ("Keys") now says:
 * - with the default key, one key per subclass (`NightlySync.run`, `HourlySync.run`): two
 *   subclasses of one base do not exclude each other;
 * - with a key given on the base method, every such subclass shares it, and the startup, which
 *   refuses that key on a method two provided subclasses inherit, never sees it: their calls
 *   exclude each other at run time (one is skipped as `held-elsewhere`).
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { DuplicateLockKeyError, LockService, WithoutOverlapping, type LockEvent } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp, startupRefusal } from './support.js';

function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Two subclasses of `SyncJob` whose overrides of its job method are left undecorated and call super. */
function overridesOf(SyncJob: new () => { run(): Promise<string> }) {
  @Injectable()
  class NightlySync extends SyncJob {
    override async run(): Promise<string> {
      return `nightly ${await super.run()}`;
    }
  }
  @Injectable()
  class HourlySync extends SyncJob {
    override async run(): Promise<string> {
      return `hourly ${await super.run()}`;
    }
  }
  return [NightlySync, HourlySync] as const;
}

describe('an undecorated override of a job method calling super', () => {
  const redis = useRedis();

  it('with the default key: runs under its own class key, one per subclass', async () => {
    const go = gate();
    const held: string[][] = [];
    @Injectable()
    class SyncJob {
      @WithoutOverlapping()
      async run(): Promise<string> {
        held.push((await redis.keys('lock:{*Sync.run}')).sort());
        await go.opened;
        return 'base';
      }
    }
    const [NightlySync, HourlySync] = overridesOf(SyncJob);
    const app = await startJobApp([NightlySync, HourlySync]);
    const nightly = app.get(NightlySync).run();
    const hourly = app.get(HourlySync).run();
    await expect.poll(() => held.length, { timeout: 10_000 }).toBe(2);
    expect((await redis.keys('lock:{*Sync.run}')).sort()).toEqual(['lock:{HourlySync.run}', 'lock:{NightlySync.run}']);
    go.open();
    expect([await nightly, await hourly]).toEqual(['nightly base', 'hourly base']);
  });

  it('with a key given on the base: every subclass shares it unrefused, and their calls exclude each other', async () => {
    const go = gate();
    let started = 0;
    @Injectable()
    class SyncJob {
      @WithoutOverlapping({ key: 'sync' })
      async run(): Promise<string> {
        started++;
        await go.opened;
        return 'base';
      }
    }
    const [NightlySync, HourlySync] = overridesOf(SyncJob);
    // Inherited, not overridden, the same two are refused at startup.
    @Injectable()
    class InheritsA extends SyncJob {}
    @Injectable()
    class InheritsB extends SyncJob {}
    expect(await startupRefusal([InheritsA, InheritsB])).toBeInstanceOf(DuplicateLockKeyError);

    const app = await startJobApp([NightlySync, HourlySync]);
    const skipped: string[] = [];
    app.get<LockService>(LockService).events$.subscribe((event: LockEvent) => event.type === 'skipped' && skipped.push(`${event.key}: ${event.reason}`));
    const nightly = app.get(NightlySync).run();
    await expect.poll(() => started, { timeout: 10_000 }).toBe(1);
    expect(await app.get(HourlySync).run()).toBe('hourly undefined');
    expect(skipped).toEqual(['sync: held-elsewhere']);
    go.open();
    expect(await nightly).toBe('nightly base');
  });
});
