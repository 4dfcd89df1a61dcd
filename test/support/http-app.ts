import type { INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { CapturedLogs } from './lock-app.js';

export interface HttpAppOptions {
  /** The HTTP adapter: Nest's default (Express) if none. */
  adapter?: AbstractHttpAdapter;
  /** What the testing module logs into: a `CapturedLogs` nobody reads if none. */
  logs?: LoggerService;
  /** The application's own logger (`createNestApplication`'s `logger`): none (`false`) by default. */
  logger?: LoggerService | false;
}

/**
 * A Nest HTTP application of a testing module made of `metadata`, compiled, not yet listening:
 * assign it where the test closes it before calling `listenOnLoopback`, so that an application
 * whose startup fails there is closed too.
 *
 * @example
 * app = await createHttpApp({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register(board)] });
 * const url = `${await listenOnLoopback(app)}/locks`;
 */
export async function createHttpApp(metadata: ModuleMetadata, { adapter, logs = new CapturedLogs(), logger = false }: HttpAppOptions = {}): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).setLogger(logs).compile();
  return adapter === undefined ? moduleRef.createNestApplication({ logger }) : moduleRef.createNestApplication(adapter, { logger });
}

/** Starts `app` on a free port of 127.0.0.1: its base URL (`http://127.0.0.1:<port>`, never `[::1]`). */
export async function listenOnLoopback(app: INestApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}
