import { Injectable } from '@nestjs/common';
import { Locked, LockService } from 'nestjs-redis-lock';
import { filter } from 'rxjs';

export interface ReportRun {
  name: string;
  ranMs: number;
  ttl: number;
  renewals: number;
  fencingToken: number;
  lockLost: boolean;
}

const REPORT_TTL = Number(process.env.REPORT_TTL ?? 1_000);

/** A job that runs far longer than its lock's ttl: the watchdog keeps the lock alive. */
@Injectable()
export class ReportsService {
  constructor(private readonly locks: LockService) {}

  @Locked('report:<0>', { ttl: REPORT_TTL, waitTimeout: 0 })
  async build(name: string, durationMs: number): Promise<ReportRun> {
    const lock = this.locks.current()!;
    let renewals = 0;
    const counting = this.locks.events$
      .pipe(filter((event) => event.type === 'renewed' && event.fencingToken === lock.fencingToken && event.key === lock.key))
      .subscribe(() => renewals++);
    const started = performance.now();
    try {
      // Work in steps, checking the lock between them as a long job should.
      while (performance.now() - started < durationMs) {
        lock.signal.throwIfAborted();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      counting.unsubscribe();
    }
    return {
      name,
      ranMs: Math.round(performance.now() - started),
      ttl: REPORT_TTL,
      renewals,
      fencingToken: lock.fencingToken,
      lockLost: lock.signal.aborted,
    };
  }
}
