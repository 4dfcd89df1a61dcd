import { Test } from '@nestjs/testing';
import { afterAll, afterEach } from 'vitest';
import { LockService, type RedisLockModuleOptions } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs, createLockApp, type LockApp } from './lock-app.js';

/** Opens apps on one Redis (the test server) or on one shared in-memory store, closed after each test. */
export interface StoreBackend {
  label: 'redis' | 'memory';
  open(options?: Partial<RedisLockModuleOptions>): Promise<LockApp>;
}

export function useBothStores(): StoreBackend[] {
  const apps: LockApp[] = [];
  const memory = new InMemoryLocks();
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(() => memory.clear());
  const track = async (app: Promise<LockApp>) => {
    const opened = await app;
    apps.push(opened);
    return opened;
  };
  return [
    { label: 'redis', open: (options = {}) => track(createLockApp(options)) },
    {
      label: 'memory',
      open: (options = {}) =>
        track(
          (async () => {
            const logs = new CapturedLogs();
            const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: memory, ...(options as object) })] })
              .setLogger(logs)
              .compile();
            await moduleRef.init();
            return { locks: moduleRef.get(LockService), logs, close: () => moduleRef.close() };
          })(),
        ),
    },
  ];
}

let run = 0;
export const uniqueKey = (name: string) => `both-stores:${process.pid}:${Date.now().toString(36)}:${++run}:${name}`;
