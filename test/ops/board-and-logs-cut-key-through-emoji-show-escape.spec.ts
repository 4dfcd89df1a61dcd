import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { quoteKey } from '../../lib/core/keys/quote-key.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { useChromium } from '../support/chromium.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review (forty-first session). A key longer than what is shown is cut to its first 200
 * UTF-16 code units, in error messages and logs (`quoteKey`) and on the lock board's page (the key
 * cell and the confirmation of a release by force). Cut through a character outside the BMP (an
 * emoji, a CJK extension ideograph), the shown start ended in half of it, which both escape as a
 * lone surrogate: `"kkk…k\ud83d…"`, an escape of a character the key does not hold, where the
 * docs say an escape shows a control or formatting character that is in it.
 */
const KEY = `${'k'.repeat(199)}😀${'tail'.repeat(10)}`;

describe('a key cut through an emoji where it is shown', () => {
  useRedis();
  const browser = useChromium();
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('is cut before the emoji in messages and logs, not through it', () => {
    // Before: "kkk…k\ud83d…".
    expect(quoteKey(KEY)).toBe(JSON.stringify(`${'k'.repeat(199)}…`));
  });

  it('is cut before the emoji on the board, not through it', { timeout: 60_000 }, async () => {
    app = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ guards: [AdminHeaderGuard] })],
    });
    const url = `${await listenOnLoopback(app)}/locks`;
    const lock = await app.get(LockService).acquire(KEY);
    const context = await browser().newContext({ extraHTTPHeaders: { 'x-admin': 'yes' } });
    try {
      const page = await context.newPage();
      await page.goto(url);
      const cell = page.locator('#locks tbody td.key').first();
      await cell.waitFor({ timeout: 10_000 });
      // Before: "kkk…k\ud83d…".
      expect(await cell.textContent()).toBe(`${'k'.repeat(199)}…`);
      expect(await cell.getAttribute('title')).toBe(KEY);
    } finally {
      await context.close();
      await lock.release();
    }
  });
});
