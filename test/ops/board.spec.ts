import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumPath } from '../../scripts/chromium.mjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LockService, RedisLockModule, type LockEvent } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import type { LockBoardOptions } from '../../lib/board/index.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { nextEvent } from '../support/lock-app.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { Redis } from 'ioredis';
import { SCAN_WORK_PER_PAGE } from '../../lib/core/stores/redis/lock-admin.js';

const holderScript = fileURLToPath(new URL('./fixtures/board-holder.mjs', import.meta.url));
const docs = fileURLToPath(new URL('../../docs/', import.meta.url));

/** The application's own guard: the board is an admin page. */
const HOSTILE_KEY = `<img src=x onerror="window.__xss=1">"'&amp;`;
const HOSTILE_LABEL = `<script>window.__xss=2</script>\nline two`;
/** The longest key a lock takes (1,024 characters), markup included. */
const LONG_KEY = `<img src=x onerror="window.__xss=3">${'k'.repeat(1024 - 36)}`;

describe('live lock board in headless Chromium', () => {
  useRedis();
  let browser: Browser;
  let app: INestApplication | undefined;
  const children: ChildProcessWithoutNullStreams[] = [];
  // Starting Chromium took longer than the 20 s hook timeout once on a loaded machine (load 13 on 2 cores).
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox'], timeout: 60_000 });
  }, 60_000);
  afterAll(() => browser?.close());
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.stdin.end('exit\n');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));
    }
    await app?.close();
    app = undefined;
  });

  async function startBoard(options: LockBoardOptions = {}): Promise<string> {
    app = await createHttpApp({
      imports: [
        RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true, instanceName: 'board-app' }),
        RedisLockBoardModule.register({ path: 'admin/locks', guards: [AdminHeaderGuard], ...options }),
      ],
    });
    return `${await listenOnLoopback(app)}/admin/locks`;
  }

  /** Another process holding `locks`; resolves once it holds them all. */
  async function holdElsewhere(locks: { key: string; label: string; limit?: number; permits?: number }[]): Promise<ChildProcessWithoutNullStreams> {
    const child = spawn(process.execPath, [holderScript], { env: { ...process.env, REDIS_URL: redisUrl(), LOCKS: JSON.stringify(locks) } });
    children.push(child);
    await waitForLine(child, 'held');
    return child;
  }

  async function openBoard(url: string): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ extraHTTPHeaders: { 'x-admin': 'yes' }, viewport: { width: 1280, height: 640 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(url);
    return { page, problems };
  }
  const row = (page: Page, key: string) => page.locator('#locks tbody tr').filter({ has: page.locator('td.key', { hasText: key }) });

  it('lists a lock held by another process, shows a waiter, and updates when it is released', async () => {
    const url = await startBoard();
    const holder = await holdElsewhere([
      { key: 'invoice:2026-11', label: 'InvoicesService.close' },
      { key: HOSTILE_KEY, label: HOSTILE_LABEL },
    ]);
    const { page, problems } = await openBoard(url);
    await page.locator('#locks tbody tr').first().waitFor({ timeout: 10_000 });
    const locks = app!.get(LockService);
    const waiting = locks.acquire('invoice:2026-11', { waitTimeout: 30_000, label: 'BillingJob.run' });

    const invoice = row(page, 'invoice:2026-11');
    await expect.poll(() => invoice.locator('td.waiters').textContent(), { timeout: 10_000 }).toBe('1');
    expect(await invoice.textContent()).toContain('InvoicesService.close');
    expect(await invoice.textContent()).toContain(`holder-process · `);
    expect(await invoice.textContent()).toContain(`pid ${holder.pid}`);
    // Keys and labels are shown as text, never run as HTML.
    const hostile = row(page, HOSTILE_KEY);
    expect(await hostile.locator('td.key').textContent()).toBe(HOSTILE_KEY);
    expect(await hostile.textContent()).toContain('<script>window.__xss=2</script> line two');
    expect(await page.locator('#locks img, #locks script').count()).toBe(0);
    // Read-only by default: no release button.
    expect(await page.locator('button.release').count()).toBe(0);
    // The live feed shows this process starting to wait.
    await expect.poll(() => page.locator('#feed li.waiting').first().textContent(), { timeout: 10_000 }).toContain('invoice:2026-11');
    // For docs/observability.md: two locks held by another process, one with a waiter, and the live
    // feed. Written only when asked (UPDATE_SCREENSHOTS=1), so that a test run leaves the tree clean.
    const shot = await page.screenshot(process.env.UPDATE_SCREENSHOTS === '1' ? { path: `${docs}lock-board.png` } : {});
    expect(shot.byteLength).toBeGreaterThan(0);

    holder.stdin.write('release\n');
    const lock = await waiting;
    // This process holds it now: the row follows, and the feed shows the acquisition.
    await expect.poll(() => invoice.textContent(), { timeout: 10_000 }).toContain(`pid ${process.pid}`);
    expect(await invoice.textContent()).toContain('BillingJob.run');
    expect(await invoice.locator('td.waiters').textContent()).toBe('0');
    await expect.poll(() => page.locator('#feed li.acquired').first().textContent(), { timeout: 10_000 }).toContain('invoice:2026-11');
    expect(await row(page, HOSTILE_KEY).count()).toBe(1);
    await lock.release();
    await expect.poll(() => invoice.count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => page.locator('#feed li.released').first().textContent()).toContain('invoice:2026-11');
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('cuts a long key and label on the page, shown as text', async () => {
    const url = await startBoard();
    await holdElsewhere([{ key: LONG_KEY, label: `<i>${'l'.repeat(500)}</i>` }]);
    const { page, problems } = await openBoard(url);
    const long = page.locator('#locks tbody tr').filter({ has: page.locator('td.key', { hasText: LONG_KEY.slice(0, 100) }) });
    await long.waitFor({ timeout: 10_000 });
    // The whole key is in the cell's title; the cell shows its start.
    const shownKey = (await long.locator('td.key').textContent())!;
    expect(shownKey).toBe(`${LONG_KEY.slice(0, 200)}…`);
    expect(await long.locator('td.key').getAttribute('title')).toBe(LONG_KEY);
    // The label was cut to 64 characters when it was recorded.
    const label = await long.locator('td').nth(1).evaluate((td) => td.firstChild!.textContent!);
    expect(label.startsWith('<i>llll')).toBe(true);
    expect(label.length).toBeLessThanOrEqual(64);
    expect(await page.locator('#locks img, #locks i').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  // Found by review (rv31, observability): a key without expiry was shown as "0.0 s" left, as if
  // about to free itself, on every refresh; it never will.
  it('shows a lock whose key has no expiry as such, not as expiring', async () => {
    const url = await startBoard();
    const lock = await app!.get(LockService).acquire('stuck:no-expiry', { autoRenew: false });
    const admin = new Redis(redisUrl());
    await admin.persist('lock:{stuck:no-expiry}');
    admin.disconnect();
    const { page, problems } = await openBoard(url);
    const stuck = row(page, 'stuck:no-expiry');
    await expect.poll(() => stuck.textContent(), { timeout: 10_000 }).toContain('no expiry');
    expect(await stuck.textContent()).not.toContain('0.0 s');
    expect(problems).toEqual([]);
    await lock.release();
  });

  it('shows a semaphore: holders, permits used of its limit, and waiters', async () => {
    const url = await startBoard();
    const holder = await holdElsewhere([{ key: 'exports', label: 'BigExport.run', limit: 3, permits: 2 }]);
    const locks = app!.get(LockService);
    const small = await locks.acquire('exports', { limit: 3, label: 'SmallExport.run' });
    const waiting = locks.acquire('exports', { limit: 3, permits: 2, waitTimeout: 30_000, label: 'Waiting.run' });
    // Settled by the test; a failing test must not leave an unhandled rejection at shutdown.
    waiting.catch(() => undefined);
    const { page, problems } = await openBoard(url);
    const exports = row(page, 'exports');
    await expect.poll(() => exports.locator('td.waiters').textContent(), { timeout: 10_000 }).toBe('1');
    const text = (await exports.textContent())!;
    expect(text).toContain('semaphore: 3 of 3 permits');
    expect(text).toContain('BigExport.run');
    expect(text).toContain('2 permits');
    expect(text).toContain('SmallExport.run');
    expect(await exports.locator('button.release').count()).toBe(0);
    // The other process lets its 2 permits go: the waiter gets them, and the row follows.
    holder.stdin.write('release\n');
    const granted = await waiting;
    await expect.poll(() => exports.locator('td.waiters').textContent(), { timeout: 10_000 }).toBe('0');
    expect(await exports.textContent()).toContain('Waiting.run');
    await small.release();
    await granted.release();
    await expect.poll(() => exports.count(), { timeout: 10_000 }).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  // 80,000 keys written, then a page per 40,000 scanned: more than the default 20 s on a loaded machine.
  it('says more locks may exist when a page found none before its scan budget ran out', { timeout: 60_000 }, async () => {
    const url = await startBoard();
    const redis = new Redis(redisUrl());
    try {
      for (let from = 0; from < 2 * SCAN_WORK_PER_PAGE; from += 2_000) {
        await redis.mset(...Array.from({ length: 2_000 }, (_, i) => [`cache:${from + i}`, 'x']).flat());
      }
    } finally {
      redis.disconnect();
    }
    const { page, problems } = await openBoard(url);
    await page.locator('#more').waitFor({ state: 'visible', timeout: 10_000 });
    expect(await page.locator('#empty').isHidden()).toBe(true);
    expect(await page.locator('#more').textContent()).toContain('more may exist');
    expect(await page.locator('#next').isVisible()).toBe(true);
    // Following the pages ends at the empty state, once the scan is complete.
    // Clicked in the page: a locator's click waits for two animation frames in a row with the
    // button still (Playwright's "stable"), which a renderer starved of CPU (the whole suite on two
    // cores) did not give it within 30 s. The button is only clicked while it is shown.
    for (let pages = 0; pages < 20 && (await page.locator('#empty').isHidden()); pages++) {
      await page.locator('#next').evaluate((next: { hidden: boolean; click(): void }) => {
        if (!next.hidden) next.click();
      });
      await page.waitForTimeout(200);
    }
    await page.locator('#empty').waitFor({ state: 'visible', timeout: 10_000 });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('releases by force only when enabled, after a confirmation, and records it as an event', async () => {
    const url = await startBoard({ allowForceRelease: true });
    await holdElsewhere([{ key: 'stuck', label: 'StuckJob.run' }]);
    const { page, problems } = await openBoard(url);
    const stuck = row(page, 'stuck');
    await stuck.waitFor({ timeout: 10_000 });
    const dialogs: string[] = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await stuck.locator('button.release').click();
    await expect.poll(() => dialogs.length).toBe(1);
    expect(await app!.get(LockService).isLocked('stuck')).toBe(true); // dismissed: nothing happens
    const recorded = nextEvent(app!.get(LockService).events$, 'force-released');
    page.once('dialog', (dialog) => void dialog.accept());
    await stuck.locator('button.release').click();
    expect(await recorded).toMatchObject({ key: 'stuck', holder: expect.stringContaining('StuckJob.run') });
    await expect.poll(() => stuck.count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => page.locator('#feed li.force-released').first().textContent()).toContain('stuck');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  // Found by review (thirty-ninth session): a key held by readers read as held by "unknown", with
  // a "Release by force" button that always answered "not released" (readers are left alone).
  it('shows a key held by readers as a read lock with its readers, and offers no release by force for it', async () => {
    const url = await startBoard({ allowForceRelease: true });
    const locks = app!.get(LockService);
    const readers = [await locks.acquire('exports', { mode: 'read', label: 'Exports.read' }), await locks.acquire('exports', { mode: 'read', label: 'Exports.read' })];
    const writer = await locks.acquire('stuck', { label: 'StuckJob.run' });
    const { page, problems } = await openBoard(url);
    const exports = row(page, 'exports');
    await exports.waitFor({ timeout: 10_000 });
    await row(page, 'stuck').waitFor({ timeout: 10_000 });
    expect(await exports.textContent()).toContain('read lock');
    expect(await exports.textContent()).toContain('2 readers');
    expect(await exports.locator('button.release').count()).toBe(0);
    // A writer's row on the same page still has its button.
    expect(await row(page, 'stuck').locator('button.release').count()).toBe(1);
    for (const reader of readers) expect(reader.held).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
    await Promise.all([...readers, writer].map((lock) => lock.release()));
  });

  it('lets the application close while a board page is open', async () => {
    const url = await startBoard();
    const { page, problems } = await openBoard(url);
    await page.locator('#empty').waitFor({ state: 'visible', timeout: 10_000 });
    // The live feed is connected: the board listens to this process's events.
    await expect.poll(() => (app!.get(LockService)[LOCK_RUNNER] as LockManager).listening).toBe(true);
    const closing = app!.close();
    app = undefined;
    await closing;
    expect(problems.filter((problem) => !/ERR_CONNECTION_REFUSED|api\/events/.test(problem))).toEqual([]);
  });

  it('is protected by the application guard, read-only by default, and asks for confirmation in the API', async () => {
    const readOnly = await startBoard();
    expect((await fetch(readOnly)).status).toBe(403);
    const page = await fetch(readOnly, { headers: { 'x-admin': 'yes' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const refused = await fetch(`${readOnly}/api/locks/release`, {
      method: 'POST',
      headers: { 'x-admin': 'yes', 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'k', confirm: 'k' }),
    });
    expect(refused.status).toBe(403);
    await app!.close();
    const writable = await startBoard({ allowForceRelease: true });
    const unconfirmed = await fetch(`${writable}/api/locks/release`, {
      method: 'POST',
      headers: { 'x-admin': 'yes', 'content-type': 'application/json', 'x-lock-board': '1' },
      body: JSON.stringify({ key: 'k' }),
    });
    expect(unconfirmed.status).toBe(400);
    expect(() => RedisLockBoardModule.register({ pageSize: 0 })).toThrow(/RedisLockBoardModule.register: Option "pageSize"/);
    expect(() => RedisLockBoardModule.register({ path: '<x>' })).toThrow(/Option "path"/);
  });
});

function waitForLine(child: ChildProcessWithoutNullStreams, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.split('\n').includes(line)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`holder process exited (${code}) before "${line}": ${errors}`)));
  });
}

export type { LockEvent };
