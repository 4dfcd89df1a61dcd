/**
 * Found by review (session 43). `@Locked`, `using()`, `runAsLeader()` and the election's hooks
 * refuse a generator (its body runs as it is iterated, after the call returned), but the job
 * decorators did not: `@WithoutOverlapping() async *rows(): any` was accepted when the class was
 * defined, and a job method returning a Promise of a generator (which its types accept) resolved
 * with it once the run lock was given back. The generator's body then ran as its caller iterated,
 * with no lock held: two callers iterating at once ran the body side by side, the overlap the
 * decorator exists to prevent (and on a `@Cron`, which never iterates it, the body never ran).
 * A generator method is now refused when the class is defined, and a generator returned by another
 * method is refused at the call, closed before its body runs, as `@Locked` does.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { OnOneInstance, RedisLockError, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { definitionRefusal, startJobApp } from './support.js';

describe('a job method and generators', () => {
  const redis = useRedis();

  it.each([
    ['WithoutOverlapping', WithoutOverlapping],
    ['OnOneInstance', OnOneInstance],
  ])('@%s() on a generator method is refused when the class is defined, naming it', (name, decorator) => {
    const refused = definitionRefusal(() => {
      @Injectable()
      class Rows {
        @decorator()
        async *rows(): any {
          yield 1;
        }
      }
      return Rows;
    });
    // Before: accepted (refused is undefined).
    expect({ lockError: refused instanceof RedisLockError, message: (refused as Error | undefined)?.message }).toEqual({
      lockError: true,
      message: expect.stringMatching(new RegExp(`^@${name}\\(\\) on Rows\\.rows: a generator method runs its body as it is iterated`)),
    });
  });

  it('a generator returned by a job method is refused at the call, its body never run unlocked', async () => {
    const lockedWhileIterating: number[] = [];
    async function* rowsOf(): AsyncGenerator<number> {
      lockedWhileIterating.push(await redis.exists('lock:{Rows.rows}'));
      yield 1;
    }
    @Injectable()
    class Rows {
      @WithoutOverlapping({ ttl: '10s' })
      async rows(): Promise<AsyncGenerator<number>> {
        return rowsOf();
      }
    }
    const app = await startJobApp([Rows]);
    const outcome = await app
      .get<Rows>(Rows)
      .rows()
      .then(
        async (rows) => {
          for await (const _ of rows ?? []) void _;
          return 'ran';
        },
        (error: unknown) => `refused: ${(error as Error).constructor.name}: ${(error as Error).message}`,
      );
    // Before: { outcome: 'ran', lockedWhileIterating: [0] }: the body ran after the run lock was given back.
    expect({ outcome, lockedWhileIterating }).toEqual({
      outcome: expect.stringMatching(/^refused: RedisLockError: @WithoutOverlapping\(\) method Rows\.rows returned a generator/),
      lockedWhileIterating: [],
    });
    expect(await redis.exists('lock:{Rows.rows}')).toBe(0);
  });
});
