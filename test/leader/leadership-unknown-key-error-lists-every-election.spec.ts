/**
 * Found by review (forty-third session): `LeadershipService.isLeader()`, `leaderLock()` and
 * `runAsLeader()` asked for a key no election of the application has refused naming every
 * election key of the application: each key quoted and cut, but all of them, so an application
 * with hundreds of elections (one per tenant, per region: keys from configuration) put a message
 * of tens of thousands of characters in the log line and the HTTP error of every such call.
 *
 * Promise (docs/jobs-and-leaders.md, and every other message naming keys): keys from users are
 * shown quoted, escaped and cut, and a list of them names the first three and counts the rest
 * (as a multi-key lock's keys are shown).
 */
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

/** A key as configuration could hold it: long, with a newline that would forge a log line and a bidi override. */
const hostile = (i: number): string => `tenant-${i}\nERROR [RedisLock] forged \u202e${'x'.repeat(900)}`;

function electionOf(key: string): new () => object {
  @Injectable()
  @LeaderElection(key, { ttl: '30s' })
  class Election {}
  return Election;
}

describe('LeadershipService asked for a key no election has', () => {
  useRedis();

  it('names a bounded, escaped handful of the elections the application runs', async () => {
    const elections = Array.from({ length: 40 }, (_, i) => electionOf(hostile(i)));
    const app = await startJobApp(elections);
    const leadership = app.get<LeadershipService>(LeadershipService);
    const asked = `unknown\n${'y'.repeat(10_000)}`;
    const refusals = [
      (() => {
        try {
          leadership.isLeader(asked);
        } catch (error) {
          return error as Error;
        }
        throw new Error('isLeader() did not throw');
      })(),
      await leadership.runAsLeader(asked, () => 'ran').then(
        () => new Error('runAsLeader() ran'),
        (error: unknown) => error as Error,
      ),
    ];
    for (const error of refusals) {
      expect(error.message).toContain('no @LeaderElection() with this key in this application');
      expect(error.message).toContain('"tenant-0\\nERROR [RedisLock] forged \\u202e');
      expect(error.message).not.toMatch(/[\n\u202e]/);
      // Failed: all 40 keys named, over 8,000 characters.
      expect(error.message).toContain('and 37 more');
      expect(error.message.length).toBeLessThan(1_500);
    }
  }, 30_000);
});
