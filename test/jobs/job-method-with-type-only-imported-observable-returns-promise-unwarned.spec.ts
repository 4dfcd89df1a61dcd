/**
 * Found by review (forty-first session), beside job-method-with-inferred-observable-type-returns-promise.spec.ts:
 * a job method declared `stream(): Observable<number>` where `Observable` comes from
 * `import type { Observable } from 'rxjs'` (or `import { type Observable }`, as the
 * `consistent-type-imports` lint rule and `verbatimModuleSyntax` write it) has no class in its
 * decorator metadata: TypeScript emits `Object` for it. The wrapper then runs it as a method that
 * returns an Observable through a Promise, its callers typed Observable get a Promise
 * (`.pipe is not a function`), and, the return type counting as declared, nothing warned.
 */
import { Injectable } from '@nestjs/common';
import { isObservable, lastValueFrom, of, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a job method declared to return an Observable imported as a type only', () => {
  useRedis();

  it('is warned about once, naming the method and the type-only import', async () => {
    @Injectable()
    class Sync {
      @WithoutOverlapping()
      stream(): Observable<number> {
        return of(1, 2);
      }
    }
    const app = await startJobApp([Sync]);
    const sync = app.get<Sync>(Sync);
    const result: unknown = sync.stream();
    expect(isObservable(result)).toBe(false);
    expect(await lastValueFrom(((await result) as Observable<number>).pipe(toArray()))).toEqual([1, 2]);
    // Failed: no warning at all.
    expect(app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringMatching(/^@WithoutOverlapping\(\) method Sync\.stream returned an Observable, but .*`import type`/),
    ]);
  });
});
