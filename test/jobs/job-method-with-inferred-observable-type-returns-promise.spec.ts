/**
 * Found by review (twenty-ninth session): a job method whose return type is inferred (no
 * annotation) and is an Observable, `@WithoutOverlapping() stream() { return of(1, 2); }`, is
 * typed `() => Observable<number>` for its callers (the decorators keep the method's type), and
 * the decorators' types accept it, but a call returns a Promise: the wrapper
 * (lib/decorators/job-lock.wrapper.ts, `returnsObservable`) looks only at `design:returntype`,
 * which TypeScript emits as `void 0` for a method without a return type annotation.
 * `this.sync.stream().pipe(...)` compiles and throws "pipe is not a function" at run time, and
 * `.subscribe()` likewise, with nothing saying why. The docs make this very point for other return
 * types ("`once(): number` does not compile: the decorated call would return a Promise its callers
 * do not expect"), but an inferred Observable gets through. `@Locked` has the same gap
 * (lib/decorators/locked.decorator.ts). The call cannot return an Observable without knowing
 * before it runs (the lock is then taken at subscription), and refusing it would break callers
 * that await it (Nest's router among them): it is warned about once, naming the method and the
 * remedy, declaring the return type.
 */
import { Injectable } from '@nestjs/common';
import { isObservable, lastValueFrom, of, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a method returning an Observable, its return type inferred', () => {
  useRedis();

  it('is warned about once, naming the job method and the remedy', async () => {
    @Injectable()
    class Sync {
      @WithoutOverlapping()
      stream() {
        return of(1, 2);
      }
    }
    const app = await startJobApp([Sync]);
    const sync = app.get<Sync>(Sync);
    // Typed Observable<number> for the caller, it is a Promise of the Observable.
    const result: unknown = sync.stream();
    expect(isObservable(result)).toBe(false);
    expect(await lastValueFrom(((await result) as ReturnType<Sync['stream']>).pipe(toArray()))).toEqual([1, 2]);
    // A second run (once the first one's run lock is given back: a call meanwhile is skipped).
    await expect
      .poll(async () => {
        const stream = await (sync.stream() as unknown as Promise<ReturnType<Sync['stream']> | undefined>);
        return stream && (await lastValueFrom(stream.pipe(toArray())));
      })
      .toEqual([1, 2]);
    // Was: nothing said why `.pipe` is not a function.
    expect(app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      '@WithoutOverlapping() method Sync.stream returned an Observable, but its return type is not declared (inferred, imported with `import type`, or the build emits no decorator metadata): ' +
        'its callers get a Promise of the Observable where its type says Observable. Declare the return type `Observable<...>`, imported as a value (the lock is then taken at subscription), or make the method async.',
    ]);
  });

  it('is warned about once for @Locked too', async () => {
    @Injectable()
    class Feed {
      @Locked('feed')
      stream() {
        return of(1, 2);
      }
      @Locked('feed:declared')
      async later() {
        return of(3);
      }
    }
    const app = await startJobApp([Feed]);
    const feed = app.get<Feed>(Feed);
    for (let call = 0; call < 2; call++) {
      const result: unknown = feed.stream();
      expect(isObservable(result)).toBe(false);
      expect(await lastValueFrom(((await result) as ReturnType<Feed['stream']>).pipe(toArray()))).toEqual([1, 2]);
    }
    // An async method's callers are told a Promise, which they get: no warning.
    await lastValueFrom(await feed.later());
    expect(app.logs.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      expect.stringMatching(/^@Locked on Feed\.stream returned an Observable, but its return type is not declared .*Declare the return type `Observable<\.\.\.>`/),
    ]);
  });
});
