/**
 * Found by review (twenty-ninth session, left over): a job class (`@OnOneInstance()`,
 * `@WithoutOverlapping()`) or a class with `@Locked` methods, provided in a feature module that
 * does not see RedisLockModule (not imported there, not global), fails at compile with Nest's
 * own UnknownDependenciesException, before any code of the library runs. It named the class but
 * not the remedy: `Please make sure that the "Symbol(nestjs-redis-lock:JobLockOrchestrator)"
 * property is available`, and its hints speak of a `JobLockOrchestrator` provider the user never
 * heard of. The one text of that message the library controls is the injected property's name
 * (its symbol's description): it says to import RedisLockModule now.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { Locked, OnOneInstance, RedisLockModule, WithoutOverlapping } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';

/** What compiling an application whose feature module provides `provider` without RedisLockModule throws. */
async function compileError(provider: new () => object): Promise<string> {
  @Module({ providers: [provider] })
  class ReportsModule {}
  // Never connected: the compile fails before the module opens its client.
  @Module({ imports: [RedisLockModule.forRoot({ redis: 'redis://127.0.0.1:1' }), ReportsModule] })
  class AppModule {}
  return Test.createTestingModule({ imports: [AppModule] })
    .setLogger(new CapturedLogs())
    .compile()
    .then(
      () => 'compiled',
      (error: unknown) => (error as Error).message,
    );
}

describe('a class that needs RedisLockModule, in a module that does not see it', () => {
  it('@OnOneInstance(): the compile error names the class and says to import RedisLockModule', async () => {
    @Injectable()
    class Reports {
      @OnOneInstance({ ttl: '10s' })
      async nightly(): Promise<void> {}
    }
    const message = await compileError(Reports);
    expect(message).toContain('dependencies of the Reports');
    // Fails: '... the "Symbol(nestjs-redis-lock:JobLockOrchestrator)" property is available ...'
    expect(message).toMatch(/import RedisLockModule .*isGlobal: true/);
  });

  it('@WithoutOverlapping(): the same', async () => {
    @Injectable()
    class Digest {
      @WithoutOverlapping()
      async send(): Promise<void> {}
    }
    const message = await compileError(Digest);
    expect(message).toContain('dependencies of the Digest');
    expect(message).toMatch(/import RedisLockModule .*isGlobal: true/);
  });

  it('@Locked: the same', async () => {
    @Injectable()
    class Billing {
      @Locked('billing')
      async pay(): Promise<void> {}
    }
    const message = await compileError(Billing);
    expect(message).toContain('dependencies of the Billing');
    expect(message).toMatch(/import RedisLockModule .*isGlobal: true/);
  });
});
