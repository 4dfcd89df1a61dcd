import type { INestApplication, Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { createHttpApp, listenOnLoopback } from './http-app.js';
import { CapturedLogs } from './lock-app.js';

/** A started module with the lock module on `client` (a handed client of any kind) and the Terminus indicator; close it in the test. */
export async function terminusLockModule(client: unknown, options: Partial<RedisLockModuleOptions> = {}): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ ...options, redis: client as never })],
    providers: [RedisLockHealthIndicator],
  })
    .setLogger(new CapturedLogs())
    .compile();
  await moduleRef.init();
  return moduleRef;
}

/**
 * An HTTP application with the lock module on `redis`, the Terminus indicator and `controller`
 * (the test's health routes), listening on a free loopback port: the application (close it in
 * the test) and its base URL.
 */
export async function terminusHttpApp(redis: RedisLockModuleOptions['redis'], controller: Type, options: Partial<RedisLockModuleOptions> = {}): Promise<{ app: INestApplication; url: string }> {
  const app = await createHttpApp({
    imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ ...options, redis })],
    controllers: [controller],
    providers: [RedisLockHealthIndicator],
  });
  return { app, url: await listenOnLoopback(app) };
}
