import { Injectable, type Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OnOneInstance } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

// Found by review (forty-fifth session). Since f875c0c an application with an @OnOneInstance()
// job watches its event loop for stalls: a timer beating every twelfth of the job's ttl, from
// startup on, set on the engine's clock, whose timers on the system clock are the global ones.
// A test that fakes the timers (docs/testing.md, "Fake timers": `vi.useFakeTimers()`,
// `jest.useFakeTimers()`) found that timer among its own, and it never runs out: in a test of a
// service with such a job, `vi.runAllTimers()` (`jest.runAllTimers()`, the usual way to fire a
// `@Timeout()`) failed with "Aborting after running 10000 timers, assuming an infinite loop!"
// before any call of the job, where the application holds nothing and sets no timer of its own.
// The watch is about the process' event loop: on the system clock it beats on Node's own timers,
// which fake timers leave alone (the library's own turns of the event loop do so too).
@Injectable()
class NightlyExport {
  @OnOneInstance({ ttl: '1s' })
  async run(): Promise<string> {
    return 'ran';
  }
}

async function startInMemory(providers: Provider[]): Promise<{ close(): Promise<void> }> {
  const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: new InMemoryLocks(), isGlobal: true, ttl: '30s' })], providers })
    .setLogger(new CapturedLogs())
    .compile();
  await moduleRef.init();
  return moduleRef;
}

describe('an application with an @OnOneInstance() job that holds nothing yet, under fake timers', () => {
  useRedis();
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['the in-memory store', () => startInMemory([NightlyExport])],
    ['Redis', () => startJobApp([NightlyExport])],
  ] as const)('on %s: sets no faked timer, and vi.runAllTimers() ends', async (_store, start) => {
    vi.useFakeTimers();
    const app = await start();
    try {
      // It was 1, and runAllTimers() threw "Aborting after running 10000 timers, assuming an infinite loop!".
      expect(vi.getTimerCount()).toBe(0);
      expect(() => vi.runAllTimers()).not.toThrow();
    } finally {
      vi.useRealTimers();
      await app.close();
    }
  });
});
