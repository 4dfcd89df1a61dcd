import { Injectable, type CanActivate, type INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { CapturedLogs } from '../support/lock-app.js';

/**
 * Found by review of 0dc591a ("unknown names, extras returned by a forRootAsync factory [...] are
 * refused at startup": a name that is no option was dropped without a word). The lock board, the
 * neighbouring module, keeps that defect where it matters most: `guards` returned by a
 * `registerAsync()` factory (docs/observability.md: registerAsync() "takes `path` and `guards`
 * directly and the rest from `useFactory`") is dropped by checkSettings() without a word, and the
 * board is served with no guard at all: anyone who reaches the application reads every lock key,
 * label, host and pid. Only a warning says "has no guards", which is what the author believes
 * they just fixed. A misspelt option (`guard`, `allowForceReleases`) is dropped the same way.
 * The docs: "Bad options stop the application at startup with an InvalidLockOptionsError
 * naming the option."
 */
@Injectable()
class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

describe('RedisLockBoardModule.registerAsync() whose factory returns guards', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('is refused at startup naming "guards", not served without any guard', { timeout: 30_000 }, async () => {
    let error: unknown;
    let status: number | undefined;
    try {
      app = await createHttpApp({
        imports: [
          RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true }),
          RedisLockBoardModule.registerAsync({ useFactory: () => ({ guards: [DenyAll] }) as never }),
        ],
      }, { adapter: new ExpressAdapter(), logger: new CapturedLogs() });
      const url = await listenOnLoopback(app);
      status = (await fetch(`${url}/locks/api/locks?cursor=0`)).status;
    } catch (caught) {
      error = caught;
    }
    // Before: { refused: undefined, status: 200 } — the board answers anyone; DenyAll never ran.
    expect({ refused: error instanceof InvalidLockOptionsError ? error.option : error, status }).toEqual({ refused: 'guards', status: undefined });
  });
});
