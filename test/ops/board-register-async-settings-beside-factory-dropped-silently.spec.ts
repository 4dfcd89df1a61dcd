import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { AdminHeaderGuard } from '../support/board-guards.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Found by review (forty-first session). docs/observability.md: `registerAsync()` "takes `path`,
 * `guards` and `routeMetadata` directly and the rest from `useFactory`", and "bad options stop the
 * application at startup with an InvalidLockOptionsError naming the option (... a name that is no
 * option ...)". A setting given beside `useFactory` instead of returned by it (`allowedHosts`
 * moved up next to `path` and `guards`, from a config spread or JavaScript) is dropped without a
 * word by Nest's builder, which reads only its own names and the extras: the board then answers
 * every host, the one check against a page that reached it by DNS rebinding gone, and no warning
 * is logged since the board has guards. A name that is no option at all is dropped the same way.
 */
describe('RedisLockBoardModule.registerAsync() with a setting beside useFactory', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(options: object): Promise<{ refused: unknown; status?: number }> {
    try {
      app = await createHttpApp(
        {
          imports: [
            RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true }),
            RedisLockBoardModule.registerAsync({ guards: [AdminHeaderGuard], useFactory: () => ({}), ...options } as never),
          ],
        },
        { adapter: new ExpressAdapter(), logger: new CapturedLogs() },
      );
      const url = await listenOnLoopback(app);
      // A rebound page's request: its own host name.
      return { refused: undefined, status: (await fetch(`${url}/locks/api/locks`, { headers: { host: 'evil.example', 'x-admin': 'yes' } })).status };
    } catch (error) {
      return { refused: error instanceof InvalidLockOptionsError ? [error.option, error.message] : error };
    }
  }

  it('is refused at startup naming allowedHosts, not served to every host', { timeout: 30_000 }, async () => {
    const answer = await start({ allowedHosts: ['admin.internal'] });
    // Before: { refused: undefined, status: 200 } — the rebound request read the lock list.
    expect(answer.status).toBeUndefined();
    expect(answer.refused).toEqual(['allowedHosts', expect.stringMatching(/^RedisLockBoardModule\.registerAsync: Option "allowedHosts" .*returned by useFactory/)]);
  });

  it('refuses a name that is no option of registerAsync(), naming it', { timeout: 30_000 }, async () => {
    const answer = await start({ alowedHosts: ['admin.internal'] });
    expect(answer.status).toBeUndefined();
    expect(answer.refused).toEqual(['alowedHosts', expect.stringMatching(/RedisLockBoardModule\.registerAsync: Option "alowedHosts" .*no option/)]);
  });
});
