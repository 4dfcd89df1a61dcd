/**
 * Defect: one key under the lock prefix that this library would not have written (a key longer
 * than 1,024 characters, or an empty tag like `lock:{\}`) makes every page of the lock board's
 * list that contains it fail with 500, hiding all the real locks on that page.
 *
 * Promise (docs/observability.md, "The live lock board" / "Paging"; lib/core/stores/redis/lock-admin.ts
 * `listLocks` TSDoc): the board lists "the locks held under the prefix", scanning with SCAN and
 * inspecting each lock found; keys are user input and whoever can write to Redis writes what the
 * board reads ("Labels come from whoever can write to Redis").
 *
 * What happens: `inspectAll` (lock-admin.ts:157-160) runs `manager.inspect(key)` on every key the
 * scan found with `Promise.all`; `inspect` calls `checkLockKey` (lock-manager.ts:476), which throws
 * a LockKeyError for a key longer than 1,024 characters or empty. One such key rejects the whole
 * page: `GET <path>/api/locks` answers 500 and the board shows "cannot load the locks". A key of
 * another type at a lock's name (a hash: GET answers WRONGTYPE) does the same. One failing key
 * should be left out of (or flagged on) the page, not take the page down.
 */
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('lock board list with a foreign key under the prefix', () => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(): Promise<string> {
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowWithoutGuards: true })],
    });
    return `${await listenOnLoopback(app)}/locks`;
  }

  it.each([
    ['a key longer than 1,024 characters', `lock:{${'x'.repeat(2_000)}}`],
    ['an empty escaped tag', 'lock:{\\}'],
    ['a key of another type (a hash)', 'lock:{cache-entry}'],
  ])('still lists the real locks when Redis holds %s', async (_what, foreign) => {
    const url = await start();
    const lock = await app!.get(LockService).acquire('invoice:1', { label: 'Invoices.close' });
    // Written by someone else who can write to Redis (another tool, an older deployment).
    if (foreign === 'lock:{cache-entry}') await redis.hset(foreign, 'field', 'value');
    else await redis.set(foreign, 'someone-else', 'PX', 60_000);

    const response = await fetch(`${url}/api/locks?cursor=0`);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { locks: { key: string }[] };
    expect(page.locks.map((each) => each.key)).toContain('invoice:1');
    await lock.release();
  });
});
