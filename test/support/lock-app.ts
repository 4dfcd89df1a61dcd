import type { LoggerService } from '@nestjs/common';
import { afterEach } from 'vitest';
import { Test } from '@nestjs/testing';
import { firstValueFrom, type Observable, filter, take, toArray, timeout } from 'rxjs';
import { LockService, RedisLockModule, type LockEvent, type RedisLockModuleOptions } from '../../lib/index.js';
import { redisUrl } from './redis.js';

/** Collects what the library logs, so tests can assert on it without printing it. */
export class CapturedLogs implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.push('log', message);
  }
  error(message: unknown): void {
    this.push('error', message);
  }
  warn(message: unknown): void {
    this.push('warn', message);
  }
  debug(message: unknown): void {
    this.push('debug', message);
  }
  verbose(message: unknown): void {
    this.push('verbose', message);
  }
  has(level: string, text: string): boolean {
    return this.lines.some((line) => line.level === level && line.message.includes(text));
  }
  private push(level: string, message: unknown): void {
    this.lines.push({ level, message: String(message) });
  }
}

export interface LockApp {
  locks: LockService;
  logs: CapturedLogs;
  close(): Promise<void>;
}

/** A Nest application context with `RedisLockModule.forRoot()` on the test server. */
export async function createLockApp(options: Partial<RedisLockModuleOptions> = {}): Promise<LockApp> {
  const logs = new CapturedLogs();
  const moduleRef = await Test.createTestingModule({
    imports: [RedisLockModule.forRoot({ redis: redisUrl(), ...options })],
  })
    .setLogger(logs)
    .compile();
  await moduleRef.init();
  return { locks: moduleRef.get(LockService), logs, close: () => moduleRef.close() };
}

/** The next event of `type`, failing the test if it does not come within `ms`. */
export function nextEvent<T extends LockEvent['type']>(
  events$: Observable<LockEvent>,
  type: T,
  ms = 5_000,
): Promise<Extract<LockEvent, { type: T }>> {
  return firstValueFrom(
    events$.pipe(
      filter((event): event is Extract<LockEvent, { type: T }> => event.type === type),
      take(1),
      timeout(ms),
    ),
  );
}

export function collectEvents(events$: Observable<LockEvent>, count: number): Promise<LockEvent[]> {
  return firstValueFrom(events$.pipe(take(count), toArray()));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `promise` is still pending after `ms` (what a frozen replica keeps from settling). */
export async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await sleep(ms);
  return !settled;
}

/**
 * Creates lock apps for the tests of a file and closes them after each test:
 * `const app = useLockApps(); ... const holder = await app({ ttl: 1_000 });`
 */
export function useLockApps(): (options?: Partial<RedisLockModuleOptions>) => Promise<LockApp> {
  const apps: LockApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  return async (options = {}) => {
    const created = await createLockApp(options);
    apps.push(created);
    return created;
  };
}
