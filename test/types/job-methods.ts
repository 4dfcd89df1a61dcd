// Type tests of the job decorators (issue 18, item 12): a decorated method's call returns a
// Promise (or, declared so, an Observable), so a method typed to return anything else is refused.
import { Injectable } from '@nestjs/common';
import { Observable, of } from 'rxjs';
import { LeadershipService, OnOneInstance, WithoutOverlapping, type JobMethodDecorator, type Lock, type LockEvent, type LockSkipReason } from 'nestjs-redis-lock';

@Injectable()
export class Accepted {
  @WithoutOverlapping()
  async promise(): Promise<number> {
    return 1;
  }

  @OnOneInstance()
  observable(): Observable<number> {
    return of(1);
  }

  @OnOneInstance({ ttl: '1m' })
  @WithoutOverlapping()
  nothing(): void {}

  @WithoutOverlapping()
  async withArguments(id: string, count: number): Promise<string> {
    return `${id}:${count}`;
  }
}

@Injectable()
export class Refused {
  // @ts-expect-error a job method returning a number would return a Promise when decorated
  @WithoutOverlapping()
  once(): number {
    return 7;
  }

  // @ts-expect-error the same for @OnOneInstance()
  @OnOneInstance()
  label(): string {
    return 'x';
  }
}

const decorator: JobMethodDecorator = WithoutOverlapping({ key: 'k' });

export function leader(leadership: LeadershipService): Lock | undefined {
  const leading: boolean = leadership.isLeader('reports');
  return leading ? leadership.leaderLock('reports') : undefined;
}

export function reason(event: LockEvent): LockSkipReason | undefined {
  return event.type === 'skipped' ? event.reason : undefined;
}

void decorator;
