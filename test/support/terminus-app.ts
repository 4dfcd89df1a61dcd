import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { RedisLockModule, type RedisLockModuleOptions } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
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
