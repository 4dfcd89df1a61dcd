/**
 * Defect: when subscribing to a lock's release messages fails, the warning logged names the
 * channel with the user's key raw: newlines, terminal escape sequences and bidi overrides in a
 * key reach the log as they are (log forging), and a 1,024-character key is logged whole.
 *
 * Promise: every other place that logs a key goes through `quoteKey` (lib/core/keys/quote-key.ts:
 * "A user's key as shown in logs and error messages: quoted and escaped (no raw newlines or
 * control characters to forge log lines with) and cut to a bounded length"); the brief of the
 * library is that keys are user input and must be escaped and bounded wherever shown.
 *
 * What happens: lib/core/stores/redis/release-notifier.ts:192 logs
 * `Subscribing to ${name} failed (...)`, where `name` is the channel `lock:{<key>}:released`, with
 * the key unquoted and uncut. A subscription fails whenever Redis refuses it, e.g. for an ACL user
 * without channel permissions (`resetchannels`, the Redis 7 default for new users), or a
 * subscriber connection that is down.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useLockApps } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

const FORGED = '[Nest] 4242  - 01/01/2026, 12:00:00 AM     LOG [Payments] refund of 10000 EUR approved';
const HOSTILE_KEY = `order:1\n${FORGED}\u001b[2J\u202e${'x'.repeat(900)}`;

describe('warning of a failed release-message subscription', () => {
  const own = useOwnRedis();
  const app = useLockApps();
  const user = `review-obs-sub-${process.pid}`;
  let admin: Redis;
  beforeEach(async () => {
    admin = new Redis(own.url());
    // Keys and scripts, but no Pub/Sub channel: SUBSCRIBE is refused with NOPERM.
    await admin.call('ACL', 'SETUSER', user, 'reset', 'on', '>pw', '~*', 'resetchannels', '+@all');
  });
  afterEach(async () => {
    await admin.call('ACL', 'DELUSER', user);
    await admin.quit();
  });

  it('names the key quoted, escaped and cut, as every other log line does', async () => {
    const holder = await app({ redis: own.url() });
    const url = new URL(own.url());
    url.username = user;
    url.password = 'pw';
    const waiter = await app({ redis: url.toString() });
    const held = await holder.locks.acquire(HOSTILE_KEY);
    const waiting = waiter.locks.acquire(HOSTILE_KEY, { waitTimeout: 10_000 });
    await expect.poll(() => waiter.logs.lines.some((line) => line.message.startsWith('Subscribing to'))).toBe(true);
    await held.release();
    await (await waiting).release();

    const line = waiter.logs.lines.find((each) => each.message.startsWith('Subscribing to'))!.message;
    expect(line).not.toContain('\n');
    expect(line).not.toContain('\u001b');
    expect(line).not.toContain('\u202e');
    // quoteKey shows at most 200 characters of a key.
    expect(line.length).toBeLessThan(600);
  });
});
