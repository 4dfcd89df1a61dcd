import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { LOCK_DIAGNOSTICS_CHANNELS, type LockEvent } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review. One event object went to every `events$` subscriber and then to the
 * diagnostics channel (which the library's OTel metrics read): a subscriber that changed it (a
 * key redacted for its own log line, a field added) changed what the subscribers after it saw,
 * and what the channel published. Each `events$` subscription now gets an object of its own, and
 * the channel its own copy.
 */
describe('an events$ subscriber that changes the event it got', () => {
  useRedis();
  const app = useLockApps();

  it('changes nothing the next subscriber or the diagnostics channel sees', async () => {
    const { locks } = await app();
    const after: string[] = [];
    const published: string[] = [];
    const first = locks.events$.subscribe((event) => {
      (event as { key: string }).key = 'redacted';
    });
    const second = locks.events$.subscribe((event) => after.push(event.key));
    const onMessage = (message: unknown) => published.push((message as LockEvent).key);
    subscribe(LOCK_DIAGNOSTICS_CHANNELS.acquired, onMessage);
    try {
      await (await locks.acquire('order:1')).release();
      expect(after).toEqual(['order:1', 'order:1']);
      expect(published).toEqual(['order:1']);
    } finally {
      unsubscribe(LOCK_DIAGNOSTICS_CHANNELS.acquired, onMessage);
      first.unsubscribe();
      second.unsubscribe();
    }
  });
});
