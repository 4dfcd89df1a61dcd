// Compiled (not run) by `npm run typecheck` against the built package with skipLibCheck off:
// the published types must work for an application, decorators included.
import { Injectable } from '@nestjs/common';
import { Observable, of } from 'rxjs';
import { LockService, Locked, LockNotAcquiredError, RedisLockModule, type Lock, type LockEvent } from 'nestjs-redis-lock';

RedisLockModule.forRoot({ redis: 'redis://localhost:6379', ttl: 10_000, isGlobal: true });
RedisLockModule.forRootAsync({ useFactory: () => ({ redis: ['redis://a:1', 'redis://b:2', 'redis://c:3'] }) });

@Injectable()
export class Orders {
  constructor(private readonly locks: LockService) {}

  @Locked('order:<0>', { waitTimeout: 0, onBusy: 'skip' })
  async pay(_id: string): Promise<number> {
    const lock: Lock | undefined = this.locks.current();
    return lock?.fencingToken ?? 0;
  }

  @Locked((order: { id: number }) => `order:${order.id}`)
  ship(order: { id: number }): Observable<number> {
    return of(order.id);
  }

  async run(): Promise<void> {
    const result = await this.locks.using('k', async (lock) => lock.fencingToken);
    const n: number = result;
    this.locks.events$.subscribe((event: LockEvent) => {
      if (event.type === 'lost') console.log(event.reason, event.fencingToken, n);
    });
    try {
      await this.locks.acquire('x', { waitTimeout: 0 });
    } catch (error) {
      if (error instanceof LockNotAcquiredError) console.log(error.key, error.waitedMs);
    }
  }
}
