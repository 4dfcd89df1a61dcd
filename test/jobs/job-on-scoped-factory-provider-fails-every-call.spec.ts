import { Inject, Injectable, Scope } from '@nestjs/common';
import { ContextIdFactory, ModuleRef } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { OnOneInstance, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

// docs/jobs-and-leaders.md: "The job decorators work on any provider or controller, a class
// provider or one made by `useFactory` ...". A request-scoped or transient provider made by
// useFactory has its instances made after module init; equipScopedFactory wraps the factory, but
// LockSchedulingExplorer.equipMade gives the made instance a LockService only for @Locked
// methods, never the JobLockOrchestrator the job wrapper needs: every call of the job rejects
// ("has no lock service: the instance must be created by Nest, in a module that imports
// RedisLockModule") although it was, and the startup said nothing.
describe('a job method on a request-scoped or transient provider made by useFactory', () => {
  const redis = useRedis();

  class Exports {
    runs = 0;
    @WithoutOverlapping({ key: 'scoped-export', ttl: '10s' })
    async run(): Promise<string> {
      this.runs++;
      expect(await redis.exists('lock:{scoped-export}')).toBe(1);
      return 'ran';
    }
  }
  class Owned {
    @OnOneInstance({ key: 'scoped-owned', ttl: '10s' })
    async run(): Promise<string> {
      return 'ran';
    }
  }

  it('request-scoped factory: the call runs under its run lock', async () => {
    const app = await startJobApp([{ provide: 'EXPORTS', scope: Scope.REQUEST, useFactory: () => new Exports() }]);
    const ref = app.get<ModuleRef>(ModuleRef as never);
    const exports = await ref.resolve<Exports>('EXPORTS', ContextIdFactory.create(), { strict: false });
    const outcome = await exports.run().then(
      (value) => ({ value }),
      (error: unknown) => ({ error: (error as Error).message }),
    );
    // Fails: { error: '@WithoutOverlapping() method Exports.run has no lock service: ...' }
    expect(outcome).toEqual({ value: 'ran' });
    expect(exports.runs).toBe(1);
  });

  it('transient factory injected into a singleton: the call runs under its owner lease', async () => {
    @Injectable()
    class Holder {
      constructor(@Inject('OWNED') readonly owned: Owned) {}
    }
    const app = await startJobApp([{ provide: 'OWNED', scope: Scope.TRANSIENT, useFactory: () => new Owned() }, Holder]);
    const outcome = await app.get<Holder>(Holder).owned.run().then(
      (value) => ({ value }),
      (error: unknown) => ({ error: (error as Error).message }),
    );
    expect(outcome).toEqual({ value: 'ran' });
    expect(await redis.exists('lock:{scoped-owned:owner}')).toBe(1);
  });
});
