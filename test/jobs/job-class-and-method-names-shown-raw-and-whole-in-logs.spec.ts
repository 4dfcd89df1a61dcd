/**
 * Left from the thirty-ninth session: a job's `Class.method` was put in log lines (and the
 * `skipped` event's `where`) as it is, while every key in them is quoted, escaped and cut
 * (quoteKey). A class or method name is the user's text: a computed method name (or a class name
 * set at runtime) can hold a newline, a bidirectional override, thousands of characters; a
 * skipped call then wrote a forged log line, or kilobytes, at every tick.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LockService, WithoutOverlapping, type LockEvent, type OnLeadershipAcquired } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { closeNow, startJobApp } from './support.js';

describe("a job whose class and method names are not plain identifiers", () => {
  useRedis();

  it('is named in logs and events escaped and cut, as keys are', async () => {
    const method = `sync\nWARN [RedisLock] forged line ${'x'.repeat(5_000)}`;
    @Injectable()
    class ShownJob {
      @WithoutOverlapping({ key: 'shown-name-job', ttl: '5s' })
      async [method](): Promise<void> {}
    }
    Object.defineProperty(ShownJob, 'name', { value: `Shown\u202eJob${'y'.repeat(5_000)}` });
    const app = await startJobApp([ShownJob]);
    const locks = app.get<LockService>(LockService);
    const skipped: LockEvent[] = [];
    locks.events$.subscribe((event) => event.type === 'skipped' && skipped.push(event));
    const other = await locks.acquire('shown-name-job', { ttl: '10s' });
    try {
      await (app.get(ShownJob) as unknown as Record<string, () => Promise<void>>)[method]!();
    } finally {
      await other.release();
    }
    const lines = app.logs.lines.filter((line) => line.message.includes('Shown'));
    expect(lines.length).toBeGreaterThan(0);
    const where = skipped.map((event) => (event as { where?: string }).where ?? '');
    expect(where.length).toBe(1);
    // Failed: the skip's debug line and the event's where held the raw newline, the raw U+202E and
    // all 10,000 characters of the names.
    for (const text of [...lines.map((line) => line.message), ...where]) {
      expect(text).not.toMatch(/[\n\u202e]/);
      expect(text.length).toBeLessThan(600);
    }
    expect(where[0]).toContain('Shown\\u202eJob');
  });
});

describe('a @LeaderElection class whose name is not a plain identifier', () => {
  useRedis();

  it('is named in its logs escaped and cut', async () => {
    @Injectable()
    @LeaderElection('shown-name-leader', { ttl: '5s' })
    class ShownLeader implements OnLeadershipAcquired {
      led = false;
      onLeadershipAcquired(): void {
        this.led = true;
      }
    }
    Object.defineProperty(ShownLeader, 'name', { value: `Shown\nLeader${'z'.repeat(5_000)}` });
    const app = await startJobApp([ShownLeader]);
    await expect.poll(() => app.get(ShownLeader).led, { timeout: 5_000 }).toBe(true);
    await closeNow(app);
    const lines = app.logs.lines.filter((line) => line.message.includes('Shown'));
    expect(lines.length).toBeGreaterThan(0);
    // Failed: "Shown\nLeaderzzz... leads "shown-name-leader"", the raw newline and all 5,000 characters.
    for (const { message } of lines) {
      expect(message).not.toContain('\n');
      expect(message.length).toBeLessThan(600);
    }
  });
});
