import { Module, type Provider } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { afterEach } from 'vitest';
import { RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

export interface JobApp {
  get<T>(type: new (...args: never[]) => T): T;
  get<T>(token: string | symbol): T;
  logs: CapturedLogs;
  close(): Promise<void>;
}

const open: JobApp[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
});

/** An application with @nestjs/schedule and RedisLockModule on the test server, closed after each test. */
export async function startJobApp(providers: Provider[], options: Partial<RedisLockModuleOptions> = {}): Promise<JobApp> {
  const logs = new CapturedLogs();
  @Module({ imports: [ScheduleModule.forRoot(), RedisLockModule.forRoot({ redis: redisUrl(), ttl: 1_000, ...options })], providers })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
  await moduleRef.init();
  let closing: Promise<void> | undefined;
  const app: JobApp = { get: (token: unknown) => moduleRef.get(token as string), logs, close: () => (closing ??= moduleRef.close()) };
  open.push(app);
  return app;
}

/** Closes `app` in the test itself (and no more after it). */
export function closeNow(app: JobApp): Promise<void> {
  open.splice(open.indexOf(app), 1);
  return app.close();
}

/** The error the startup of an application with `providers` failed with (an Error "started" when it started). */
export function startupRefusal(providers: Provider[], options: Partial<RedisLockModuleOptions> = {}): Promise<Error> {
  return startJobApp(providers, options).then(
    () => new Error('started'),
    (error: unknown) => error as Error,
  );
}

/** What `define` (a class definition) threw, or undefined when it was accepted. */
export function definitionRefusal(define: () => unknown): unknown {
  try {
    define();
    return undefined;
  } catch (error) {
    return error;
  }
}
