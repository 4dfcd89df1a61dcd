/**
 * Found by review (thirty-ninth session): a job method named by a Symbol (`@Interval(1000)
 * @WithoutOverlapping() async [RUN]() {}`) was accepted, and the application started; but Nest's
 * explorers list a class' methods by their string names only: @nestjs/schedule never scheduled it
 * (it silently never ran), and the module's startup checks never saw it, so its lock key
 * (`Reports.Symbol(run)`) went unchecked and unclaimed (another job given that key explicitly
 * shared its lock without a `DuplicateLockKeyError`). It is now refused when the class is
 * defined, naming the class, the method and the decorator (the module's startup finds Symbol-named
 * methods now, for `@Locked`; @nestjs/schedule still would not run it).
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { OnOneInstance, RedisLockError, WithoutOverlapping } from '../../lib/index.js';

const RUN = Symbol('run');

describe('a job method named by a Symbol', () => {
  it.each([
    ['WithoutOverlapping', WithoutOverlapping],
    ['OnOneInstance', OnOneInstance],
  ])('@%s() is refused when the class is defined, naming the class, the method and the decorator', (name, decorator) => {
    const define = (): unknown => {
      @Injectable()
      class Reports {
        @decorator()
        async [RUN](): Promise<void> {}
      }
      return Reports;
    };
    let refused: unknown;
    try {
      define();
    } catch (error) {
      refused = error;
    }
    expect({ lockError: refused instanceof RedisLockError, message: (refused as Error | undefined)?.message }).toEqual({
      lockError: true,
      message: expect.stringMatching(new RegExp(`^@${name}\\(\\) on Reports\\[Symbol\\(run\\)\\]: a job method must be named by a string, not a Symbol`)),
    });
  });
});
