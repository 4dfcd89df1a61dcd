import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Review (decorators, s28). A `redis` URL the module refuses (another scheme, or one `new URL()`
 * cannot parse: a base64 password with an unencoded "/" is the common case) is echoed whole, up to
 * 60 characters, in the InvalidLockOptionsError message (lib/core/options/lock-options.ts
 * `checkRedis` -> `InvalidLockOptionsError.show`), credentials included. That message is what Nest
 * logs when the application fails to start, i.e. it goes to the log pipeline. The library strips
 * credentials elsewhere for this reason (`addressOf`: "host:port ... no credentials").
 */
describe('a redis URL refused at startup', () => {
  // The last one (found by review of the fix): ioredis takes a password in the query too.
  for (const url of ['valkey://default:s3cretPassw0rd@cache:6379', 'redis://:ab/cd+s3cretPassw0rd==@cache:6379', 'reids://cache:6379/?password=s3cretPassw0rd']) {
    it(`is not echoed with its password (${url.split('/')[0]}${url.includes('?') ? ' query' : ''})`, async () => {
      const error = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: url })] })
        .setLogger(new CapturedLogs())
        .compile()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockOptionsError);
      expect((error as InvalidLockOptionsError).option).toBe('redis');
      // Before: '... got "valkey://default:s3cretPassw0rd@cache:6379".'
      expect((error as Error).message).not.toContain('s3cretPassw0rd');
    });
  }
});
