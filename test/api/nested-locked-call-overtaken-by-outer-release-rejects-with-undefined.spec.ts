/**
 * Found by review (forty-sixth session). A nested `@Locked` call of a key its chain holds is
 * handed a re-entry of the outer lock, and starts its method a microtask later. A call started
 * from a microtask of the outer method's last step (a `then` of a promise the method made, not
 * awaited) got its re-entry while the outer lock was still held, and started once the outer call
 * had released it: the lease check before the method runs found the handle over, and the call
 * rejected with the outer lock's signal's reason, `undefined` (a release aborts no signal), an
 * unhandled rejection with nothing to tell what failed. The method never ran. Nested work that
 * outlives the outer lock takes the key afresh (docs/locks.md, "Reentrancy"): so does this call.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { lastValueFrom, Observable, of } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

interface Ran {
  token: number | undefined;
  held: boolean | undefined;
}

@Injectable()
class Orders {
  outerToken?: number;
  nested?: Promise<unknown>;
  constructor(readonly locks: LockService) {}

  @Locked('order:<0>')
  async pay(id: string): Promise<void> {
    this.outerToken = this.locks.current()!.fencingToken;
    // Not awaited: the receipt goes out from a microtask of the method's last step.
    void Promise.resolve().then(() => {
      this.nested = this.receipt(id).catch((error: unknown) => ({ rejected: error }));
    });
  }

  @Locked('order:<0>')
  async payStreaming(id: string): Promise<void> {
    this.outerToken = this.locks.current()!.fencingToken;
    void Promise.resolve().then(() => {
      this.nested = lastValueFrom(this.receipts(id)).catch((error: unknown) => ({ rejected: error }));
    });
  }

  @Locked('order:<0>')
  async receipt(_id: string): Promise<Ran> {
    return this.ran();
  }

  @Locked('order:<0>')
  receipts(_id: string): Observable<Ran> {
    return of(this.ran());
  }

  private ran(): Ran {
    const lock = this.locks.current('order:1') ?? this.locks.current('order:2');
    return { token: lock?.fencingToken, held: lock?.held };
  }
}

describe('a nested @Locked call whose re-entry the outer call released before it started', () => {
  const redis = useRedis();
  let close: (() => Promise<void>) | undefined;
  afterEach(() => close?.());

  async function orders(): Promise<Orders> {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Orders] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    close = () => moduleRef.close();
    return moduleRef.get(Orders);
  }

  it('runs its method under the key taken afresh (a method returning a Promise)', async () => {
    const service = await orders();
    await service.pay('1');
    const ran = (await service.nested) as Ran;
    expect(ran).toEqual({ token: expect.any(Number), held: true });
    expect(ran.token).toBeGreaterThan(service.outerToken!);
    expect(await redis.exists('lock:{order:1}')).toBe(0);
  });

  it('runs its method under the key taken afresh (a method declared to return an Observable)', async () => {
    const service = await orders();
    await service.payStreaming('2');
    const ran = (await service.nested) as Ran;
    expect(ran).toEqual({ token: expect.any(Number), held: true });
    expect(ran.token).toBeGreaterThan(service.outerToken!);
    await expect.poll(() => redis.exists('lock:{order:2}')).toBe(0);
  });
});
