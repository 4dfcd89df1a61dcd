/**
 * Found by review (thirty-fifth session; carried as "scoped-factory jobs not checked at
 * startup"). The startup refuses two jobs or elections that would use one Redis lock
 * (DuplicateLockKeyError), and job keys no lock can have, by reading each provider's class. A
 * transient or request-scoped provider made by `useFactory` has no class to read there (its
 * metatype is the factory): its job methods run (their instances get the orchestrator as the
 * factory returns them) but were never checked. A transient factory's job whose key is a
 * `@LeaderElection`'s started without a word; its run lock is the election's lease, so the job
 * never ran while a leader led, and when it ran it kept every instance from leading. Such a job is
 * now checked when its factory first returns an instance of the class: at startup for a transient
 * provider Nest makes for a singleton, at the first request for a request-scoped one.
 */
import { Inject, Injectable, Module, Scope } from '@nestjs/common';
import { ContextIdFactory, ModuleRef } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { DuplicateLockKeyError, LeaderElection, RedisLockModule, WithoutOverlapping } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

class Reports {
  @WithoutOverlapping({ key: 'reports-feed' })
  async run(): Promise<string> {
    return 'ran';
  }
}

@Injectable()
@LeaderElection('reports-feed')
class Feed {}

async function startup(providers: unknown[]): Promise<{ error: unknown; moduleRef: Awaited<ReturnType<ReturnType<typeof Test.createTestingModule>['compile']>> }> {
  @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: providers as never[] })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
  const error = await moduleRef.init().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, moduleRef };
}

describe('a job method on a provider made by a transient or request-scoped factory', () => {
  useRedis();

  it('transient, made for a singleton: a key an election uses fails the startup', async () => {
    @Injectable()
    class Holder {
      constructor(@Inject('REPORTS') readonly reports: Reports) {}
    }
    const { error, moduleRef } = await startup([{ provide: 'REPORTS', scope: Scope.TRANSIENT, useFactory: () => new Reports() }, Holder, Feed]);
    await moduleRef.close().catch(() => undefined);
    // Failed: undefined (the application started).
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    expect((error as DuplicateLockKeyError).message).toContain('Reports.run (@WithoutOverlapping');
    expect((error as DuplicateLockKeyError).message).toContain('Feed (@LeaderElection)');
  });

  it('request-scoped: the first instance its factory makes is refused, naming both', async () => {
    const { error, moduleRef } = await startup([{ provide: 'REPORTS', scope: Scope.REQUEST, useFactory: () => new Reports() }, Feed]);
    try {
      expect(error).toBeUndefined();
      const ref = moduleRef.get<ModuleRef>(ModuleRef as never);
      const made = await ref.resolve<Reports>('REPORTS', ContextIdFactory.create(), { strict: false }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      // Failed: undefined (an instance whose job takes the election's lease).
      expect(made).toBeInstanceOf(DuplicateLockKeyError);
    } finally {
      await moduleRef.close();
    }
  });
});
