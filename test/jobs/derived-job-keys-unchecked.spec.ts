/**
 * Defect: the keys a job really locks (`<key>:owner`, `<jobNamespace>:Class.method`) are never
 * checked against the key rules, so a configuration accepted at definition and at startup makes
 * every call of the job fail.
 *
 * Promise (docs/jobs-and-leaders.md, "Options"): the job decorators' options "are checked when
 * the class is defined"; JobLockOptions.key: "`@OnOneInstance()` holds its lease under
 * `<key>:owner`"; the module option `jobNamespace` is "checked" (checkJobNamespace: "a string of 1
 * to 64 characters without braces or control characters") and joined to default keys. Module
 * options are "checked when the application starts" (InvalidLockOptionsError TSDoc).
 *
 * What happens:
 * 1. `checkJobOptions` (lib/scheduling/job-spec.ts:42) checks `key` against the 1024-character
 *    limit, but the lease key is `key + ':owner'` (job-spec.ts:99): a key of 1019..1024
 *    characters passes the decorator and startup, then every call rejects with `LockKeyError:
 *    The lock key is 1030 characters long` from `tryAcquire('<key>:owner')`.
 * 2. `checkJobNamespace` (job-spec.ts:111) accepts a lone surrogate (its `u`-flag class
 *    `[^{}\u0000-\u001f\u007f]` matches one), which `checkLockKey` refuses in every key; so every
 *    job with a default key rejects at each call with a LockKeyError.
 * With @Cron/@Interval the job then silently never runs (the schedule explorer logs the error at
 * each tick). The explorer (lib/scheduling/lock-scheduling.explorer.ts:92-100) binds every job at
 * startup and could check `job.key`/`job.ownerKey` with `checkLockKey` there.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { OnOneInstance, RedisLockModule, WithoutOverlapping, type RedisLockModuleOptions } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Starts the application; resolves `{ refused }` if startup fails, else the started module. */
async function start(provider: new (...args: never[]) => unknown, options: Partial<RedisLockModuleOptions> = {}) {
  @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), ttl: 1_000, ...options })], providers: [provider] })
  class AppModule {}
  try {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    return { moduleRef };
  } catch (refused) {
    return { refused };
  }
}

/** What a call of the job gave: its value, or the error's class and the start of its message. */
const outcomeOf = (call: Promise<unknown>) =>
  call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: `${(error as Error).name}: ${(error as Error).message.slice(0, 80)}` }),
  );

describe('job keys derived from accepted options', () => {
  useRedis();

  it('an @OnOneInstance() key of 1024 characters: refused up front, or the job runs', async () => {
    const key = 'k'.repeat(1024);
    let defined: (new () => { runs: number; run(): Promise<string> }) | undefined;
    let refusedAtDefinition: unknown;
    try {
      @Injectable()
      class LongKeyJob {
        runs = 0;
        @OnOneInstance({ key })
        async run(): Promise<string> {
          this.runs++;
          return 'ran';
        }
      }
      defined = LongKeyJob;
    } catch (error) {
      refusedAtDefinition = error;
    }
    if (refusedAtDefinition !== undefined) {
      // Refused at once, naming the option and the method: fixed.
      expect((refusedAtDefinition as Error).message).toMatch(/LongKeyJob\.run/);
      return;
    }
    const { moduleRef, refused } = await start(defined!);
    if (refused !== undefined) {
      // Refused at startup: fixed too.
      expect((refused as Error).message).toMatch(/LongKeyJob\.run/);
      return;
    }
    const job = moduleRef!.get(defined!);
    // Accepted at definition and at startup: a call must then run the job.
    // Today: { error: 'LockKeyError: The lock key is 1030 characters long; at most 1024 are allowed. ...' }
    expect(await outcomeOf(job.run())).toEqual({ value: 'ran' });
    expect(job.runs).toBe(1);
  });

  it('a jobNamespace with a lone surrogate: refused at startup, or default-keyed jobs run', async () => {
    @Injectable()
    class Export {
      runs = 0;
      @WithoutOverlapping()
      async run(): Promise<string> {
        this.runs++;
        return 'ran';
      }
    }
    const { moduleRef, refused } = await start(Export, { jobNamespace: 'billing\uD83D' });
    if (refused !== undefined) {
      expect((refused as Error).message).toMatch(/jobNamespace/);
      return;
    }
    const job = moduleRef!.get(Export);
    // Today: { error: 'LockKeyError: The lock key is not well-formed Unicode: it holds a lone surrogate ...' }
    expect(await outcomeOf(job.run())).toEqual({ value: 'ran' });
    expect(job.runs).toBe(1);
  });
});
