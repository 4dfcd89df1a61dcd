import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

let client: Redis | undefined;

@Injectable()
class Transfers {
  /** Five keys; the connection is lost under the method, so that its release fails. */
  @Locked(['acct-e:<0>', 'acct-d:<0>', 'acct-c:<0>', 'acct-b:<0>', 'acct-a:<0>'])
  async move(id: string): Promise<string> {
    client!.disconnect();
    return id;
  }
}

/**
 * Found by review (forty-second session). The warning for a release that failed named the lock by
 * its `key`: for a multi-key `@Locked` call, the first of its keys alone (`Release of lock
 * "acct-a:7" failed (The release of lock "acct-e:7" was not answered ...)`), a lock the caller
 * never took on its own, while the part that failed may be another. It now names the lock of
 * keys, bounded as messages bound them (the first three, then how many more).
 */
describe('a multi-key @Locked call whose release fails', () => {
  const own = useOwnRedis();
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('is warned of naming the lock of keys, not its first key alone', async () => {
    const logs = new CapturedLogs();
    client = new Redis(own.url());
    moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: client, shutdownTimeout: '100ms' })], providers: [Transfers] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    expect(await moduleRef.get(Transfers).move('7')).toBe('7');
    const warnings = () => logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    await expect.poll(warnings).toHaveLength(1);
    expect(warnings()[0]).toMatch(/^Release of the lock of keys "acct-a:7", "acct-b:7", "acct-c:7" and 2 more failed \(.*Connection is closed.*\); its lease will expire on its own\.$/);
  });

  it('is warned of naming the lock of keys when using() took them', async () => {
    const logs = new CapturedLogs();
    client = new Redis(own.url());
    moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: client, shutdownTimeout: '100ms' })] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    const done = await moduleRef.get(LockService).using(['u-e', 'u-d', 'u-c', 'u-b', 'u-a'], async () => {
      client!.disconnect();
      return 'done';
    });
    expect(done).toBe('done');
    const warnings = () => logs.lines.filter((line) => line.level === 'warn').map((line) => line.message);
    await expect.poll(warnings).toHaveLength(1);
    // Failed with: Release of lock "u-a" failed (The release of lock "u-e" was not answered ...)
    expect(warnings()[0]).toMatch(/^Release of the lock of keys "u-a", "u-b", "u-c" and 2 more failed \(.*\); its lease will expire on its own\.$/);
  });
});
