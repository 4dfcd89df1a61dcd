/**
 * Found by review (thirty-seventh session). `@Locked` holds the lock of a method that returns an
 * Observable until the stream ends, and `using()` refuses an `fn` returning a generator ("its
 * body would run as it is iterated, after the release"); but `using(key, fn)` took an `fn`
 * returning an Observable without a word. An Observable is lazy: its work runs when it is
 * subscribed, which is after `using()` has given the lock back (the Observable is not a
 * Promise, so `using()` resolved with it at once). Nest hands out such Observables everywhere:
 * `HttpService.post()`, a microservice `ClientProxy.send()`. `lastValueFrom(await
 * locks.using(key, () => this.http.post(url, body)))` posted with the key free for anyone.
 *
 * Promise: docs/locks.md, `using(key, fn)`: "acquire, run `fn(lock)`, release however `fn` ends".
 */
import { lastValueFrom, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { uniqueKey, useBothStores } from '../support/both-stores.js';
import { useRedis } from '../support/redis.js';

describe.each(useBothStores())('using() with an fn that returns an Observable ($label)', (backend) => {
  useRedis();

  it.each([
    ['one key', false],
    ['a key list', true],
  ])('is refused (%s), its work never run after the lock was given back', async (_, list) => {
    const { locks } = await backend.open();
    const key = uniqueKey('observable');
    const seen: { lockedInRedis: boolean }[] = [];
    const work = new Observable<string>((subscriber) => {
      void locks.isLocked(key).then((lockedInRedis) => {
        seen.push({ lockedInRedis });
        subscriber.next('posted');
        subscriber.complete();
      });
    });
    const outcome = await (list ? locks.using([key, `${key}:b`], async () => work) : locks.using(key, () => work)).then(
      (result: unknown) => lastValueFrom(result as Observable<string>).then(() => 'subscribed after using() resolved'),
      (error: unknown) => error,
    );
    // Before: 'subscribed after using() resolved', with seen [{ lockedInRedis: false }].
    expect(outcome).toBeInstanceOf(RedisLockError);
    expect((outcome as Error).message).toMatch(/^using\((".*"|keys), fn\): fn returned an Observable/);
    expect(seen).toEqual([]);
    expect(await locks.isLocked(key)).toBe(false);
  });
});
