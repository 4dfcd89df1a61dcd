/**
 * Found by review (forty-first session), beside
 * test/jobs/job-method-with-type-only-imported-observable-returns-promise-unwarned.spec.ts: a
 * `@Locked` method declared `stream(): Observable<number>` where `Observable` comes from
 * `import type { Observable } from 'rxjs'` (or `import { type Observable }`, as the
 * `consistent-type-imports` lint rule writes it) has `Object` as its decorator metadata. The
 * decorator runs it as a method that returns an Observable through a Promise, its callers typed
 * Observable get a Promise (`.pipe is not a function`), and, `Object` counting as a declared return
 * type, nothing warned (the job wrapper already warns).
 */
import { Injectable } from '@nestjs/common';
import { isObservable, lastValueFrom, of, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

describe('a @Locked method declared to return an Observable imported as a type only', () => {
  useRedis();

  it('is warned about once, naming the method and the type-only import', async () => {
    @Injectable()
    class Feed {
      @Locked('feed')
      stream(): Observable<number> {
        return of(1, 2);
      }
    }
    expect(Reflect.getMetadata('design:returntype', Feed.prototype, 'stream')).toBe(Object);
    const app = await startJobApp([Feed]);
    const feed = app.get<Feed>(Feed);
    for (let call = 0; call < 2; call++) {
      const result: unknown = feed.stream();
      expect(isObservable(result)).toBe(false);
      expect(await lastValueFrom(((await result) as Observable<number>).pipe(toArray()))).toEqual([1, 2]);
    }
    // Failed: no warning at all.
    expect(app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringMatching(/^@Locked on Feed\.stream returned an Observable, but .*`import type`/),
    ]);
  });
});
