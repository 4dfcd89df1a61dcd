import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { OnOneInstance } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';

// Review suspicion (jobs and leaders follow-up of f84ca06). The stall watch of @OnOneInstance()
// jobs beats on the engine's clock, and on the testing module's manual clock that is a timer of
// the test's own: `manualClock.pendingTimers` counted it in an application that held nothing
// ("timers waiting for the clock to reach them": nothing in the test was), and every `advance()`
// fired it twelve times per ttl, letting the event loop settle after each beat (with a 1 s ttl,
// `advance('10m')` took 377 ms where 41 ms did without the job). A manual clock moves only in
// steps that fire every timer at its own time: no beat is ever late there, the watch can tell no
// stall, and it is not set on one.
@Injectable()
class NightlyExport {
  @OnOneInstance({ ttl: '1s' })
  async run(): Promise<string> {
    return 'ran';
  }
}

describe('an application with an @OnOneInstance() job on the manual clock', () => {
  it('holding nothing, has no timer pending, and advance() fires none', async () => {
    const locks = new InMemoryLocks({ clock: 'manual' });
    const clock = locks.manualClock!;
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks, isGlobal: true, ttl: '30s' })], providers: [NightlyExport] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      // Failed: 1 (the stall watch's beat).
      expect(clock.pendingTimers).toBe(0);
      let set = 0;
      const setTimer = clock.setTimer.bind(clock);
      clock.setTimer = (fn, ms) => {
        set++;
        return setTimer(fn, ms);
      };
      await clock.advance('10m');
      expect(set).toBe(0);
      // And the job runs under its locks as before.
      expect(await moduleRef.get(NightlyExport).run()).toBe('ran');
    } finally {
      await moduleRef.close();
    }
    expect(clock.pendingTimers).toBe(0);
  });
});
