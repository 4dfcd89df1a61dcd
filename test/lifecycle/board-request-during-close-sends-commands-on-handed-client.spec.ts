/**
 * Found by review (forty-third session): the board's list and release refused a request that came
 * while the application closed (503), but only after sending its commands. The controller's
 * `untilShutdown` started the work (`INFO` and `SCAN` for a page; the owner's read and then the
 * release itself for a release by force) and only then handed its reply to the lock service's
 * shutdown bound, which refuses at once: the commands went out on the Redis client the
 * application handed in, which its owner closes next (onApplicationShutdown), and a release by
 * force went on to delete a lock after its request had been answered "shut down".
 *
 * A `using()` call still working keeps the close in its first phase (the lock service has shut
 * down, the HTTP server still serves): the board's requests are made then.
 */
import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { holderId } from '../../lib/core/stores/redis/lock-admin.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { watchCommands } from '../support/monitor.js';
import { useOwnRedis } from '../support/redis.js';

const admin = { 'x-admin': 'yes' };
const list = (url: string): Promise<Response> => fetch(`${url}/api/locks`, { headers: admin });
const release = (url: string): Promise<Response> =>
  fetch(`${url}/api/locks/release`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json', 'x-lock-board': '1' },
    body: JSON.stringify({ key: 'stuck', confirm: 'stuck', holder: holderId('someone-else') }),
  });

describe('a board request made while the application closes, on a Redis client handed in', () => {
  const own = useOwnRedis();

  it('is refused (503) before any command goes out', { timeout: 30_000 }, async () => {
    const handed = new Redis(own.url());
    onTestFinished(() => void handed.disconnect());
    const app = await createHttpApp({
      imports: [
        RedisLockModule.forRoot({ redis: handed, shutdownTimeout: '6s', isGlobal: true }),
        RedisLockBoardModule.register({ guards: [AdminHeaderGuard], allowForceRelease: true }),
      ],
    });
    onTestFinished(() => app.close());
    const url = `${await listenOnLoopback(app)}/locks`;
    // Another holder's lock (its process is gone): the board lists it, and may release it by force.
    await own.redis().set('lock:{stuck}', 'someone-else', 'PX', 60_000);
    const names = (arg: string): boolean => /^(scan|info)$/i.test(arg) || arg === 'lock:{stuck}';

    // The control: before the close, the list reads Redis.
    const before = await watchCommands('', own.url(), names);
    expect((await list(url)).status).toBe(200);
    await before.stop();
    expect(before.seen.map(({ args }) => args[0]!.toLowerCase())).toContain('scan');

    let endWork!: () => void;
    let told!: Promise<unknown>;
    const work = app.get(LockService).using('busy', async (lock) => {
      told = new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
      await new Promise<void>((resolve) => (endWork = resolve));
    });
    await expect.poll(() => endWork !== undefined).toBe(true);
    const during = await watchCommands('', own.url(), names);
    const closing = app.close();
    // The lock service has shut down; its close waits for the call, the HTTP server still serves.
    await told;
    const answers = [(await list(url)).status, (await release(url)).status];
    await during.stop();
    endWork();
    await work;
    await closing;
    expect({ answers, sent: during.seen.map(({ args }) => args[0]!.toLowerCase()) }).toEqual({ answers: [503, 503], sent: [] });
    expect(await own.redis().get('lock:{stuck}')).toBe('someone-else');
  });
});
