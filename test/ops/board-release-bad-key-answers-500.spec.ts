/**
 * Defect: the board's release API answers 500 Internal Server Error (and Nest logs an error with
 * its stack) for a request whose key is not a valid lock key, instead of the 400 it gives every
 * other malformed body.
 *
 * Promise (docs/observability.md "Release by force"; lib/board/lock-board.controller.ts `release`):
 * `POST <path>/api/locks/release` takes `{ "key": "<key>", "confirm": "<the same key>" }`; a body
 * that is not that is answered 400 ("Body must be JSON: { \"key\": ... }"), like a bad `cursor`
 * of the list ("anything else ... is answered 400 with a message naming it").
 *
 * What happens: `release` (lock-board.controller.ts:105) only checks that `key` is a string of
 * 1 to 1,024 characters, then `forceRelease` (lock-admin.ts:169) calls `checkLockKey`, which throws
 * a `LockKeyError` for a key holding a lone surrogate (JSON `"\ud800"`). That is no HttpException:
 * Nest answers 500 and logs it as an unexpected error. Any client of the API (or a typo in a
 * script) produces server errors for what is a bad request.
 */
import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('board release API with a key that is not a lock key', () => {
  useRedis();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('answers 400, as for any other malformed body', async () => {
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowForceRelease: true, allowWithoutGuards: true })],
    });
    const url = `${await listenOnLoopback(app)}/locks`;
    // Raw JSON text: a lone surrogate escape, valid JSON, not a well-formed key.
    const body = '{"key":"order:\\ud800","confirm":"order:\\ud800","holder":"x"}';
    const response = await fetch(`${url}/api/locks/release`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-lock-board': '1' }, body });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('is not a lock key');
  });
});
