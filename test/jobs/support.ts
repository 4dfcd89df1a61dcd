import { Module, type Provider } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { onTestFinished } from 'vitest';
import { RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

export interface JobApp {
  get<T>(type: new (...args: never[]) => T): T;
  get<T>(token: string | symbol): T;
  logs: CapturedLogs;
  close(): Promise<void>;
}

/** An application with @nestjs/schedule and RedisLockModule on the test server, closed after each test. */
export async function startJobApp(providers: Provider[], options: Partial<RedisLockModuleOptions> = {}): Promise<JobApp> {
  const logs = new CapturedLogs();
  @Module({ imports: [ScheduleModule.forRoot(), RedisLockModule.forRoot({ redis: redisUrl(), ttl: 1_000, ...options })], providers })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
  await moduleRef.init();
  let closing: Promise<void> | undefined;
  const app: JobApp = { get: (token: unknown) => moduleRef.get(token as string), logs, close: () => (closing ??= moduleRef.close()) };
  // Per test, not a module-level afterEach: spec files share their worker's module cache
  // (vitest's isolate: false), so a hook this module registered would run for the first file
  // that imported it only, and every later file's applications would stay open, their leases
  // renewed and their lines logged into the next files' loggers.
  onTestFinished(() => app.close());
  return app;
}

/** Closes `app` in the test itself (its close after the test is the same one, settled). */
export function closeNow(app: JobApp): Promise<void> {
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
