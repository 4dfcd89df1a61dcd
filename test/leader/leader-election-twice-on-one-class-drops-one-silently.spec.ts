/**
 * Found by review (twenty-ninth session): `@LeaderElection()` applied twice to one class (two leaderships for one provider,
 * `@LeaderElection('feed-a') @LeaderElection('feed-b')`) is accepted, and the decorator nearer
 * the class is dropped without a word: only one election runs, and `isLeader('feed-b')` throws
 * "no @LeaderElection() with this key in this application". `@LeaderElection` writes its metadata
 * with `Reflect.defineMetadata` on the class (lib/decorators/leader-election.decorator.ts), so
 * the last decorator applied replaces the first; the job decorators refuse the same mistake
 * ("the method already has @WithoutOverlapping()"). A subclass giving its own election to an
 * elected base class is another matter (its own metadata, not the same class twice).
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, RedisLockError } from '../../lib/index.js';
import { LEADER_ELECTION_METADATA } from '../../lib/scheduling/scheduling.constants.js';

describe('@LeaderElection() twice on one class', () => {
  it('is refused when the class is defined, naming the class', () => {
    const define = () => {
      @Injectable()
      @LeaderElection('feed-a')
      @LeaderElection('feed-b')
      class Both {}
      return Both;
    };
    // Was: no error; the class ran the election "feed-a" only.
    expect(define).toThrow(RedisLockError);
    expect(define).toThrow('@LeaderElection() on Both: the class already has @LeaderElection("feed-b")');
  });

  it('still lets a subclass give its own election', () => {
    @LeaderElection('feed-base')
    class Base {}
    @Injectable()
    @LeaderElection('feed-own')
    class Own extends Base {}
    expect(Reflect.getOwnMetadata(LEADER_ELECTION_METADATA, Own)).toEqual({ key: 'feed-own' });
  });
});
