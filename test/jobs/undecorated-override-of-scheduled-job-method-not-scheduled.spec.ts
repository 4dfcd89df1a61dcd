/**
 * Found by review (forty-fourth session). A subclass overriding a scheduled job method
 * (`@Cron()`/`@Interval()` with `@WithoutOverlapping()`/`@OnOneInstance()`) without decorating its
 * override: does `@nestjs/schedule` still run it on the base's schedule? It does not. Nest reads a
 * method's decorators off the function the instance has (as for route handlers and `@OnEvent()`),
 * and the override carries none: the subclass's job is not scheduled at all, whether or not the
 * override calls `super.run()`; called by hand, it runs under the subclass's key (see
 * undecorated-override-calling-super-runs-under-subclass-key-unchecked-at-startup.spec.ts). What
 * docs/jobs-and-leaders.md ("Keys") says; the decorated base class, provided too, keeps its schedule.
 */
import { Injectable } from '@nestjs/common';
import { Cron, SchedulerRegistry } from '@nestjs/schedule';
import { describe, expect, it } from 'vitest';
import { WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('an undecorated override of a scheduled job method', () => {
  useRedis();

  it('is not scheduled: only the decorated method the instance has is', async () => {
    @Injectable()
    class Sync {
      @Cron('0 0 1 1 *', { name: 'sync' })
      @WithoutOverlapping()
      async run(): Promise<string> {
        return 'base';
      }
    }
    @Injectable()
    class NightlySync extends Sync {
      override async run(): Promise<string> {
        return `nightly ${await super.run()}`;
      }
    }
    const overridden = await startJobApp([NightlySync]);
    expect([...overridden.get(SchedulerRegistry).getCronJobs().keys()]).toEqual([]);
    await overridden.close();

    const base = await startJobApp([Sync]);
    expect([...base.get(SchedulerRegistry).getCronJobs().keys()]).toEqual(['sync']);
    await base.close();
  });
});
