import { Controller, Get, Sse, UseGuards, type MessageEvent } from '@nestjs/common';
import { LockService } from 'nestjs-redis-lock';
import { map, type Observable } from 'rxjs';
import { LockActivity } from './lock-activity.js';
import { OperatorGuard } from './operator.guard.js';

/** What this instance holds and does with locks: for operators only (`OperatorGuard`). */
@Controller('locks')
@UseGuards(OperatorGuard)
export class LocksController {
  constructor(
    private readonly locks: LockService,
    private readonly activity: LockActivity,
  ) {}

  /** Event counts since start, and the locks this instance holds right now. */
  @Get()
  state() {
    return { counts: this.activity.counts, held: Object.fromEntries(this.activity.held) };
  }

  /** Every lock event as it happens (Server-Sent Events): `curl -N -H "Authorization: Bearer $LOCKS_TOKEN" localhost:3000/locks/events`. */
  @Sse('events')
  events(): Observable<MessageEvent> {
    return this.locks.events$.pipe(map((event) => ({ type: event.type, data: event })));
  }
}
