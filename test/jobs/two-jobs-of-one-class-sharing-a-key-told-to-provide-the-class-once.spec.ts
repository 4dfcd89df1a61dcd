/**
 * Found by review (forty-first session). Two jobs that would use one lock are refused at startup
 * with a `DuplicateLockKeyError` naming both (docs/jobs-and-leaders.md, "Keys"); the remedy
 * "Provide the class once" is for one class provided under two tokens. Two job methods of one
 * class given one key, or a job method and its class' own `@LeaderElection` on one key, got that
 * remedy too (the claims came from one class): the class was provided once, and the error told
 * the user to do what they had done.
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { DuplicateLockKeyError, LeaderElection, OnOneInstance, WithoutOverlapping } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startupRefusal } from './support.js';

describe('two jobs of one class provided once that would share a lock', () => {
  useRedis();

  it('are told to give one of them another key, not to provide the class once (two job methods)', async () => {
    @Injectable()
    class Reports {
      @WithoutOverlapping({ key: 'reports' })
      async daily(): Promise<void> {}
      @WithoutOverlapping({ key: 'reports' })
      async weekly(): Promise<void> {}
    }
    const error = await startupRefusal([Reports]);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    // Failed: '... Provide the class once (a second token can name the same instance with useExisting).'
    expect(error.message).toBe('Lock key "reports" is used by both Reports.daily (@WithoutOverlapping) and Reports.weekly (@WithoutOverlapping). Give one of them another key.');
  });

  it('are told to give one of them another key (a job method on its class\' election key)', async () => {
    @Injectable()
    @LeaderElection('feed')
    class Feed {
      @OnOneInstance({ key: 'fe' })
      @WithoutOverlapping()
      async poll(): Promise<void> {}
      @WithoutOverlapping({ key: 'feed' })
      async flush(): Promise<void> {}
    }
    const error = await startupRefusal([Feed]);
    expect(error).toBeInstanceOf(DuplicateLockKeyError);
    expect(error.message).toBe('Lock key "feed" is used by both Feed.flush (@WithoutOverlapping) and Feed (@LeaderElection). Give one of them another key.');
  });
});
