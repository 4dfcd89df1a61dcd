import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found while checking review suspicions (forty-fourth session). A config class whose options are
 * getters (`get ttl() { return this.source.lockTtl }`) is options for `acquire()`, which reads
 * each option by name; `@Locked` copied its options with an object spread, which takes own
 * fields only, so the getters were dropped without a word: the method held its lock for the
 * module's ttl (and waited its waitTimeout) instead. `@Locked` now reads its options by name too.
 */
describe('@Locked given a config class instance whose options are getters', () => {
  const redis = useRedis();

  it('locks with the ttl its getter gives, not the module default', async () => {
    class LockConfig {
      get ttl(): number {
        return 60_000;
      }
    }
    let pttl = 0;
    @Injectable()
    class Reports {
      @Locked('report', new LockConfig())
      async build(): Promise<void> {
        pttl = await redis.pttl('lock:{report}');
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), ttl: 2_000 })], providers: [Reports] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      await moduleRef.get(Reports).build();
    } finally {
      await moduleRef.close();
    }
    expect(pttl).toBeGreaterThan(2_000);
  });
});
