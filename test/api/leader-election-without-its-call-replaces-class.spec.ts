/**
 * Found by review (forty-first session). `@LeaderElection` is a factory: `@LeaderElection('key')`.
 * Written without its call (JavaScript, a `@ts-ignore`, a build that does not type-check), the
 * factory got the class as its `key` and returned the real decorator, a function, which
 * TypeScript's and Babel's helpers take as the class's replacement: the provider became that
 * arrow function, and the startup failed with Nest's bare "TypeError: metatype is not a
 * constructor", naming neither the class nor the decorator. (The method decorators written
 * without their call: test/api/decorator-without-its-call-leaves-method-unguarded.spec.ts.)
 */
import { Injectable } from '@nestjs/common';
import { expect, it } from 'vitest';
import { LeaderElection, RedisLockError } from '../../lib/index.js';

it('@LeaderElection written without its call is refused when the class is defined, naming it and how to write it', () => {
  // A class declaration: TypeScript's legacy decorators are not applied in a class expression.
  const define = (): unknown => {
    @Injectable()
    // @ts-expect-error: TypeScript refuses it; JavaScript and unchecked builds do not.
    @LeaderElection
    class PriceFeed {}
    return PriceFeed;
  };
  // Before: no error here; the class became the decorator function, and Nest failed at startup.
  expect(define).toThrow(RedisLockError);
  expect(define).toThrow(/^@LeaderElection on PriceFeed was applied without its call.*write @LeaderElection\('<key>'/);
});
