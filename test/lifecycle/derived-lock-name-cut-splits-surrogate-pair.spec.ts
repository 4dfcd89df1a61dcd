import { Injectable } from '@nestjs/common';
import { LONE_SURROGATE } from '../../lib/core/keys/lock-key.js';
import { Test } from '@nestjs/testing';
import { firstValueFrom, filter, take, timeout } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { LeaderElection, Locked, LockService, RedisLockModule, type LockEvent } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// Longer than the 128 characters a lock name may have, so the library cuts the name it derives
// from it; an emoji (a surrogate pair) straddles the place of the cut: an election's name keeps
// 127 UTF-16 units (then "…"), a @Locked template's 128.
const ELECTION_KEY = `${'e'.repeat(126)}\u{1F512}tail`;
const TEMPLATE = `order:<0>:${'t'.repeat(127 - 'order:<0>:'.length)}\u{1F512}tail`;

@Injectable()
@LeaderElection(ELECTION_KEY)
class Leader {}

@Injectable()
class Orders {
  @Locked(TEMPLATE)
  async pay(id: string): Promise<string> {
    return id;
  }
}

/**
 * Found by review. A lock's `name` goes to metrics (`lock.name`), events and the diagnostics
 * channels. When the library derives it from a longer string it cuts it by UTF-16 code units:
 * `boundName()` (lib/scheduling/job-spec.ts:110) for an election key, `template.slice(0,
 * MAX_LOCK_NAME_LENGTH)` (lib/decorators/locked.decorator.ts) for a `@Locked` template. A cut
 * through a surrogate pair leaves a lone surrogate in the name: an attribute that is not valid
 * Unicode (OTLP exporters encode it as U+FFFD or fail), from a key the library itself accepted
 * (the key rules refuse lone surrogates in keys, see test/lone-surrogate-keys.spec.ts).
 */
describe('a lock name the library cuts from a long election key or @Locked template', () => {
  useRedis();

  it('stays well-formed Unicode when the cut falls inside a surrogate pair', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forRoot({ redis: redisUrl() })],
      providers: [Leader, Orders],
    })
      .setLogger(new CapturedLogs())
      .compile();
    const locks = moduleRef.get(LockService);
    const acquired = (key: string): Promise<LockEvent> =>
      firstValueFrom(locks.events$.pipe(filter((event) => event.type === 'acquired' && event.key === key), take(1), timeout(10_000)));
    const elected = acquired(ELECTION_KEY);
    await moduleRef.init();
    const leaderEvent = await elected;

    const paid = acquired(TEMPLATE.replace('<0>', '1'));
    await moduleRef.get(Orders).pay('1');
    const lockedEvent = await paid;
    await moduleRef.close();

    expect(leaderEvent.name!.length).toBeLessThanOrEqual(128);
    expect(lockedEvent.name!.length).toBeLessThanOrEqual(128);
    // The code before the fix: both names ended in a lone high surrogate, "\ud83d".
    expect({ leader: !LONE_SURROGATE.test(leaderEvent.name!), locked: !LONE_SURROGATE.test(lockedEvent.name!) }).toEqual({ leader: true, locked: true });
  });
});
