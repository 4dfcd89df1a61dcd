/**
 * Found by review (session 48, jobs2): a job method that @nestjs/schedule runs and whose Observable
 * return type is not declared (inferred, `@Interval(1000) @WithoutOverlapping() sync() { return
 * this.http.post(...); }`, or an async method returning one) passes the startup's check (it reads
 * the declared type only, see schedule-metadata.ts), and each tick's Observable is awaited by the
 * schedule and never subscribed to: its work never runs, and the run lock stays held for its ttl.
 * The warnings said to declare the return type as Observable (which the startup then refuses for
 * a scheduled method) or to make the method async (which leaves the work never running): neither
 * said that the schedule never subscribes, nor the remedy the startup's refusal gives,
 * lastValueFrom(...). A scheduled job method is told so, at its first such tick.
 */
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { of, tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a scheduled job method returning an Observable whose return type is not declared', () => {
  useRedis();

  it.each([
    ['inferred', 'Feed.sync'],
    ['returned by an async method', 'Feed.asyncSync'],
  ])('is told that the schedule never subscribes to it (%s), and to return lastValueFrom(...)', async (_case, where) => {
    const calls = { 'Feed.sync': 0, 'Feed.asyncSync': 0 } as Record<string, number>;
    let subscribed = 0;
    @Injectable()
    class Feed {
      @Interval(20)
      @WithoutOverlapping({ ttl: '1s' })
      sync() {
        calls['Feed.sync']!++;
        return of(1).pipe(tap(() => subscribed++));
      }
      @Interval(20)
      @WithoutOverlapping({ ttl: '1s' })
      async asyncSync() {
        calls['Feed.asyncSync']!++;
        return of(1).pipe(tap(() => subscribed++));
      }
    }
    const app = await startJobApp([Feed]);
    // A second run: the first one's Observable was given up at its run lock's ttl.
    await expect.poll(() => calls[where], { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(subscribed).toBe(0);
    const warnings = app.logs.lines.filter((line) => line.level === 'warn' && line.message.includes(where)).map((line) => line.message);
    expect(warnings.length).toBeGreaterThan(0);
    // Was: "Declare the return type `Observable<...>` ... or make the method async", and at the
    // ttl "Declare the method's return type as Observable": the one refused at startup for a
    // scheduled method, the other leaves its work never running.
    for (const warning of warnings) {
      expect(warning).toContain('@Interval() awaits what the method returns and never subscribes to it');
      expect(warning).toContain('lastValueFrom(');
      expect(warning).not.toContain('make the method async');
      expect(warning).not.toContain('Declare the method\'s return type as Observable');
    }
  }, 30_000);
});
