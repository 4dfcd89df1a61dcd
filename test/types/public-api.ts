// Compiled (not run) by `npm run typecheck` against the built package with skipLibCheck off:
// the published types must work for an application, decorators included.
import { Injectable } from '@nestjs/common';
import { Observable, of } from 'rxjs';
import {
  DuplicateLockKeyError,
  LeaderElection,
  LockService,
  Locked,
  LockNotAcquiredError,
  OnOneInstance,
  RedisLockModule,
  WithoutOverlapping,
  type Duration,
  type Lock,
  type LockEvent,
  type OnLeadershipAcquired,
  type OnLeadershipLost,
} from 'nestjs-redis-lock';

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

// Durations, scheduled jobs, leader election and `await using`.
const durations: Duration[] = [500, '500ms', '30s', '1.5m', '1h', '2d'];
// @ts-expect-error a duration needs a unit
const noUnit: Duration = '30';
RedisLockModule.forRoot({ redis: 'redis://localhost:6379', ttl: '30s', waitTimeout: '10s', shutdownTimeout: '3s' });

@Injectable()
export class Jobs {
  constructor(private readonly locks: LockService) {}

  @OnOneInstance({ ttl: '1m' })
  @WithoutOverlapping({ key: 'jobs:export', ttl: 60_000 })
  async export(): Promise<void> {
    const lock = this.locks.current();
    console.log(lock?.fencingToken, durations, noUnit);
  }

  async scoped(): Promise<number> {
    await using lock = await this.locks.acquire('scoped', { ttl: '30d' });
    await using maybe = await this.locks.tryAcquire('maybe');
    return lock.fencingToken + (maybe?.fencingToken ?? 0);
  }
}

@Injectable()
@LeaderElection('feed', { ttl: '15s' })
export class Feed implements OnLeadershipAcquired, OnLeadershipLost {
  async onLeadershipAcquired(lock: Lock): Promise<void> {
    lock.signal.throwIfAborted();
  }
  onLeadershipLost(lock: Lock): void {
    console.log(lock.fencingToken, DuplicateLockKeyError.name);
  }
}
