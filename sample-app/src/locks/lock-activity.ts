import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { LockService, type LockEvent } from 'nestjs-redis-lock';
import type { Subscription } from 'rxjs';

/** Counts lock events by type and remembers the locks this instance holds now. */
@Injectable()
export class LockActivity implements OnModuleDestroy {
  readonly counts: Record<LockEvent['type'], number> = { waiting: 0, acquired: 0, renewed: 0, released: 0, lost: 0, 'not-acquired': 0, 'force-released': 0, skipped: 0 };
  readonly held = new Map<string, { fencingToken: number | undefined; since: number }>();
  private readonly subscription: Subscription;

  constructor(locks: LockService) {
    this.subscription = locks.events$.subscribe((event) => {
      this.counts[event.type]++;
      if (event.type === 'acquired') this.held.set(event.key, { fencingToken: event.fencingToken, since: event.at });
      if (event.type === 'released' || event.type === 'lost') this.held.delete(event.key);
    });
  }

  onModuleDestroy(): void {
    this.subscription.unsubscribe();
  }
}
