import { Controller, Get, Injectable, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import { onTestFinished } from 'vitest';
import { LockService } from '../../lib/index.js';
import { createHttpApp, listenOnLoopback } from './http-app.js';
import { CapturedLogs } from './lock-app.js';

/**
 * A listening HTTP application importing `rootImports`, whose `GET /lazy` loads a module importing
 * `lazyImports` with `LazyModuleLoader` (whose hooks Nest never runs) and answers what `work`
 * makes of the `LockService` that module sees. Closed after the test; `logs` has what it logged.
 */
export async function appLoadingLazily(
  lazyImports: DynamicModule[],
  rootImports: DynamicModule[],
  work: (locks: LockService) => Promise<unknown>,
): Promise<{ app: INestApplication; logs: CapturedLogs; url: string }> {
  @Injectable()
  class LazyWork {
    constructor(readonly locks: LockService) {}
  }
  @Module({ imports: lazyImports, providers: [LazyWork], exports: [LazyWork] })
  class LazyFeature {}
  @Controller()
  class LazyController {
    constructor(private readonly loader: LazyModuleLoader) {}
    @Get('lazy')
    async run(): Promise<string> {
      const lazy = await this.loader.load(() => LazyFeature);
      return String(await work(lazy.get(LazyWork).locks));
    }
  }
  const logs = new CapturedLogs();
  const app = await createHttpApp({ imports: rootImports, controllers: [LazyController] }, { logs, logger: logs });
  onTestFinished(() => app.close());
  return { app, logs, url: await listenOnLoopback(app) };
}

/** The warnings `logs` holds. */
export function warningsOf(logs: CapturedLogs): string[] {
  return logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
}
