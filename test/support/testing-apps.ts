import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach } from 'vitest';
import { LockService } from '../../lib/index.js';
import { RedisLockTestingModule, type InMemoryLocks, type RedisLockTestingOptions } from '../../lib/testing/index.js';
import { CapturedLogs } from './lock-app.js';

/** Opens testing modules on a store of the test's own (each an application instance on it), closed after each test. */
export function useTestingApps(): (store: InMemoryLocks, options?: RedisLockTestingOptions) => Promise<LockService> {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
  });
  return async (store, options = {}) => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ ...options, locks: store })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    opened.push(moduleRef);
    return moduleRef.get(LockService);
  };
}
